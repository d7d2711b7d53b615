""" "Why this answer": the evidence subgraph of a retrieval.

question -ASKS_ABOUT-> the entities linked in it; question -MATCHED {reasons}-> the sources found by
vector / BM25 search; and the graph paths that scored the others, read back from the stored graph:
the seed chunk a source was reached from (with the real RELATES_TO / REL / NEXT edge), the entity two
chunks share, the question entity a chunk MENTIONS, and the entity that CO_OCCURS with a question
entity. Built from a small snapshot of the retrieval (``EvidenceSnapshot``), so a streamed answer can
keep it (``remember``) and the page fetch the graph afterwards (``GET /graph?answer=<id>``).
"""

from __future__ import annotations

import hashlib
import uuid
from dataclasses import dataclass, field
from typing import Any

from app.core.ttl_cache import TTLCache
from app.entities.lookup import entity_key
from app.graphview.model import CHUNK, ENTITY, QUESTION, GraphBuilder, node_id
from app.graphview.text_graph import LINKS_PER_NODE, add_chunks, add_entity, link_chunks
from app.services.container import Services
from app.store.base import GraphStore

EXTRAS_KEY = "graph_evidence"
DIRECT = ("vector", "bm25")
COOCCUR_PATHS_PER_CHUNK = 2


@dataclass
class EvidenceSnapshot:
    """What a retrieval found and why: enough to rebuild its evidence graph later."""

    question: str
    entities: list[dict[str, Any]] = field(default_factory=list)
    sources: list[dict[str, Any]] = field(default_factory=list)


def snapshot(question: str, result: Any) -> EvidenceSnapshot:
    """The snapshot of a ``RetrievalResult`` (its question entities and top candidates)."""
    sources = []
    for rank, c in enumerate(result.top, 1):
        sources.append(
            {
                "id": c.id,
                "rank": rank,
                "reason": c.reason,
                "reasons": list(c.reasons),
                "score": _round(getattr(c, "final", None)),
                "score_raw": _round(c.score_raw),
                "via": getattr(c, "via", None),
                "depth": getattr(c, "depth", None),
                "rel_type": getattr(c, "rel_type", None),
                "rel_conf": _round(getattr(c, "rel_conf", None)),
            }
        )
    entities = [{"id": e["id"], "name": e.get("name"), "freq": e.get("freq")} for e in result.entities]
    return EvidenceSnapshot(question, entities, sources)


def _round(value: Any) -> float | None:
    return None if value is None else round(float(value), 6)


def _via(via: Any) -> tuple[str | None, str | None]:
    """(seed chunk id, entity name) named by a candidate's ``via``: ``<chunk>``, ``<chunk> via <entity>``
    or ``<entity>`` (chunk ids hold ':', see docs/SCHEMA.md)."""
    if not isinstance(via, str) or not via:
        return None, None
    head, sep, name = via.partition(" via ")
    if sep:
        return head, name
    return (via, None) if ":" in via else (None, via)


def evidence_graph(store: GraphStore, snap: EvidenceSnapshot, max_nodes: int) -> dict[str, Any]:
    """The evidence subgraph payload (nodes, edges, truncated) plus ``question`` and ``sources`` ids."""
    g = GraphBuilder(max_nodes, 4 * max_nodes)
    qid = g.add_node(
        QUESTION, hashlib.sha1(snap.question.encode()).hexdigest()[:12], snap.question, center=True
    )
    for e in snap.entities:
        g.add_edge(qid, add_entity(g, e, question_entity=True), "ASKS_ABOUT")
    source_ids = [s["id"] for s in snap.sources]
    by_id = {s["id"]: s for s in snap.sources}
    for cid in add_chunks(store, g, source_ids):
        s = by_id[cid]
        node = g.nodes[node_id(CHUNK, cid)]
        node.update(
            {
                "answer_source": True,
                "rank": s["rank"],
                "reason": s["reason"],
                "reasons": s["reasons"],
                "score": s["score"],
            }
        )
        direct = [r for r in s["reasons"] if r in DIRECT]
        if direct:
            g.add_edge(qid, node["id"], "MATCHED", reasons=direct, score_raw=s.get("score_raw"))
    seeds, shared = _paths(snap)
    add_chunks(store, g, [c for c in seeds if c not in by_id], seed=True)
    for name in shared:
        add_entity(g, {"id": entity_key(name), "name": name}, shared=True)
    chunk_ids = [n["id"][2:] for n in g.nodes.values() if n["label"] == "Chunk"]
    _stored_links(store, g, chunk_ids, [s["id"] for s in snap.sources if "cooccur" in s["reasons"]])
    body = g.as_dict()
    body["question"] = snap.question
    body["sources"] = [node_id(CHUNK, i) for i in source_ids if node_id(CHUNK, i) in g.nodes]
    return body


def _paths(snap: EvidenceSnapshot) -> tuple[list[str], list[str]]:
    """Seed chunks and shared-entity names the sources' graph paths went through."""
    seeds: list[str] = []
    shared: list[str] = []
    for s in snap.sources:
        seed, name = _via(s.get("via"))
        if seed and seed != s["id"]:
            seeds.append(seed)
        if name and "relates" in s["reasons"] and seed:
            shared.append(name)
    return list(dict.fromkeys(seeds)), list(dict.fromkeys(shared))


def _stored_links(
    store: GraphStore, g: GraphBuilder, chunk_ids: list[str], cooccur_sources: list[str]
) -> None:
    """The stored edges that make the paths: chunk-chunk links, MENTIONS, CO_OCCURS bridges."""
    link_chunks(store, g, chunk_ids)
    question_entities = [n["key"] for n in g.nodes.values() if n.get("question_entity")]
    if cooccur_sources and question_entities:
        rows = store.run(
            "graph_cooccur_paths",
            {"chunks": cooccur_sources, "entities": question_entities, "limit": COOCCUR_PATHS_PER_CHUNK},
        )
        for r in rows:
            bridge = add_entity(g, r, bridge=True)
            g.add_edge(node_id(CHUNK, r["chunk"]), bridge, "MENTIONS")
            a, b = sorted((node_id(ENTITY, r["entity"]), node_id(ENTITY, r["id"])))
            g.add_edge(a, b, "CO_OCCURS", count=r.get("count"))
    entity_ids = {n["key"] for n in g.nodes.values() if n["label"] == "Entity"}
    if entity_ids and chunk_ids:
        for r in store.run("graph_chunk_entities", {"ids": chunk_ids, "limit": LINKS_PER_NODE}):
            for e in r.get("entities") or []:
                if e["id"] in entity_ids:
                    g.add_edge(
                        node_id(CHUNK, r["chunk"]), node_id(ENTITY, e["id"]), "MENTIONS", count=e.get("count")
                    )
    # shared-entity nodes no stored chunk mentions (a stale name) would float alone: drop them
    linked = {e["source"] for e in g.edges.values()} | {e["target"] for e in g.edges.values()}
    for nid in [n for n, v in g.nodes.items() if v.get("shared") and n not in linked]:
        del g.nodes[nid]


def _kept(services: Services) -> TTLCache[EvidenceSnapshot]:
    s = services.settings
    cache = services.extras.get(EXTRAS_KEY)
    if cache is None:
        cache = services.extras.setdefault(EXTRAS_KEY, TTLCache(s.graph_evidence_keep, s.cache_ttl_s))
    return cache  # type: ignore[no-any-return]


def remember(services: Services, snap: EvidenceSnapshot) -> str:
    """Keep a snapshot for ``GET /graph?answer=<id>``; returns the id."""
    key = uuid.uuid4().hex
    _kept(services).put(key, snap)
    return key


def recall(services: Services, key: str) -> EvidenceSnapshot | None:
    """A kept snapshot, or None when unknown or expired."""
    return _kept(services).get(key)


def answer_graph(services: Services, question: str, result: Any) -> dict[str, Any]:
    """The evidence graph of a retrieval, for a JSON answer's ``graph``."""
    return evidence_graph(services.store, snapshot(question, result), services.settings.graph_default_limit)


def keep_answer_graph(services: Services, question: str, result: Any) -> str:
    """Keep a streamed answer's retrieval for ``GET /graph?answer=<id>``; returns the id."""
    return remember(services, snapshot(question, result))
