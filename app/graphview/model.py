"""The graph payload: ``{"nodes": [...], "edges": [...], "truncated": bool}`` with stable ids.

Node ids name the stored thing, so two answers (an entity's graph, then a neighbour's expansion) merge
by id in the page: ``e:<Entity.id>``, ``c:<Chunk.id>``, ``d:<Document.id>``,
``s:<dataset>/<sample_id>`` (a KG sample), ``k:<dataset>/<sample_id>|<name>`` (a KG entity inside one
sample: expansions stay inside it) and ``q:<hash>`` (a question, in evidence graphs). Edge ids are
``<source>|<type>[:<relation>]|<target>``. A builder never holds more than ``max_nodes`` nodes and
``max_edges`` edges; anything it had to leave out sets ``truncated``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from app.core.text import one_line

ENTITY, CHUNK, DOCUMENT, KG_SAMPLE, KG_ENTITY, QUESTION = "e", "c", "d", "s", "k", "q"
LABELS = {
    ENTITY: "Entity",
    CHUNK: "Chunk",
    DOCUMENT: "Document",
    KG_SAMPLE: "KGSample",
    KG_ENTITY: "KGEntity",
    QUESTION: "Question",
}
PREVIEW_CHARS = 160


def node_id(kind: str, key: str) -> str:
    """The stable id of a node of ``kind`` (one of the prefixes above) keyed by ``key``."""
    return f"{kind}:{key}"


def split_id(nid: str) -> tuple[str, str]:
    """(kind, key) of a node id; kind '' when the id has no known prefix."""
    kind, sep, key = nid.partition(":")
    if not sep or kind not in LABELS or not key:
        return "", nid
    return kind, key


def kg_entity_key(dataset: str, sample_id: str, name: str) -> str:
    """The key of a KG entity node inside one sample."""
    return f"{dataset}/{sample_id}|{name}"


def split_kg_entity_key(key: str) -> tuple[str, str, str] | None:
    """(dataset, sample_id, name) of a KG entity key, or None when malformed."""
    sample, sep, name = key.partition("|")
    dataset, sep2, sample_id = sample.partition("/")
    if not (sep and sep2 and dataset and sample_id and name):
        return None
    return dataset, sample_id, name


def preview(text: Any, chars: int = PREVIEW_CHARS) -> str:
    """One line of at most ``chars`` characters."""
    return one_line(text, chars)


@dataclass
class GraphBuilder:
    """Collects nodes and edges under the size limits; ``as_dict`` is the API payload."""

    max_nodes: int
    max_edges: int
    nodes: dict[str, dict[str, Any]] = field(default_factory=dict)
    edges: dict[str, dict[str, Any]] = field(default_factory=dict)
    truncated: bool = False

    @property
    def full(self) -> bool:
        return len(self.nodes) >= self.max_nodes

    def room(self) -> int:
        """Nodes that may still be added."""
        return max(0, self.max_nodes - len(self.nodes))

    def add_node(self, kind: str, key: str, name: Any, /, **props: Any) -> str | None:
        """Add (or enrich) a node; returns its id, or None when the node limit left it out."""
        nid = node_id(kind, key)
        node = self.nodes.get(nid)
        if node is None:
            if self.full:
                self.truncated = True
                return None
            label = str(name if name is not None else key)
            node = self.nodes[nid] = {"id": nid, "label": LABELS[kind], "name": label}
        for k, v in props.items():
            if v is not None and (k not in node or node[k] in (None, False)):
                node[k] = v
        return nid

    def add_edge(self, source: str | None, target: str | None, etype: str, **props: Any) -> str | None:
        """Add an edge between two nodes already in the graph (else nothing); returns its id."""
        if source is None or target is None or source not in self.nodes or target not in self.nodes:
            return None
        sub = props.get("relation") or props.get("rel_type")
        eid = f"{source}|{etype}{':' + str(sub) if sub else ''}|{target}"
        if eid in self.edges:
            return eid
        if len(self.edges) >= self.max_edges:
            self.truncated = True
            return None
        self.edges[eid] = {
            "id": eid,
            "source": source,
            "target": target,
            "type": etype,
            **{k: v for k, v in props.items() if v is not None},
        }
        return eid

    def as_dict(self) -> dict[str, Any]:
        return {
            "nodes": list(self.nodes.values()),
            "edges": list(self.edges.values()),
            "truncated": self.truncated,
        }
