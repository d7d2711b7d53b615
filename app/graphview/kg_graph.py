"""Subgraphs of one KG sample (the per-sample facts of KG actions, ``KGFacts`` buckets).

The sample's graph starts at its topic entities (``q_entity``; or a ``focus`` entity) and walks its
triples breadth first up to ``depth`` hops, at most ``limit`` nodes; answers (``a_entity``) are marked.
Node ids carry the sample (``k:<dataset>/<sample_id>|<name>``), so expanding a node stays inside it.
"""

from __future__ import annotations

from collections import defaultdict

from app.graphview.model import KG_ENTITY, KG_SAMPLE, GraphBuilder, kg_entity_key, node_id
from app.kg.facts import outgoing
from app.kg.graph import get_sample, get_triples
from app.kg.keys import fold, sample_key
from app.store.base import GraphStore

Triple = tuple[str, str, str]


def sample_triples(store: GraphStore, dataset: str, sample_id: str) -> list[Triple]:
    """Every distinct triple of the sample (its fact buckets, one round trip), sorted."""
    found: set[Triple] = set()
    for row in store.run("kg_facts_by_sample", {"samples": [sample_key(dataset, sample_id)]}):
        found.update(outgoing(row.get("facts")))
    return sorted(found)


def _match(names: set[str], wanted: list[str]) -> list[str]:
    """Stored names for ``wanted`` (exact, else trimmed case-insensitive; smallest match wins)."""
    folded: dict[str, list[str]] = defaultdict(list)
    for n in names:
        folded[fold(n)].append(n)
    out = []
    for w in wanted:
        if w in names:
            out.append(w)
        elif folded.get(fold(w)):
            out.append(min(folded[fold(w)]))
    return list(dict.fromkeys(out))


class _SampleGraph:
    """Adds a sample's entities and triples to a builder."""

    def __init__(self, g: GraphBuilder, dataset: str, sample_id: str, answers: set[str], topics: set[str]):
        self.g, self.dataset, self.sample_id = g, dataset, sample_id
        self.answers, self.topics = answers, topics

    def entity(self, name: str) -> str | None:
        return self.g.add_node(
            KG_ENTITY,
            kg_entity_key(self.dataset, self.sample_id, name),
            name,
            dataset=self.dataset,
            sample_id=self.sample_id,
            topic=name in self.topics or None,
            answer=name in self.answers or None,
        )

    def triple(self, h: str, r: str, t: str) -> None:
        self.g.add_edge(self.entity(h), self.entity(t), "KG_REL", relation=r)


def sample_graph(
    store: GraphStore, dataset: str, sample_id: str, depth: int, limit: int, focus: str | None = None
) -> GraphBuilder | None:
    """The sample node, its topic entities and their neighbourhood; None when the sample is not loaded."""
    info = get_sample(store, dataset, sample_id)
    if info is None:
        return None
    triples = sample_triples(store, dataset, sample_id)
    adj: dict[str, list[Triple]] = defaultdict(list)
    for triple in triples:
        adj[triple[0]].append(triple)
        adj[triple[2]].append(triple)
    names = set(adj)
    topics = _match(names, list(info.get("q_entity") or []))
    answers = set(_match(names, list(info.get("a_entity") or [])))
    starts = _match(names, [focus]) if focus else topics
    if not starts and not focus and adj:
        starts = [max(sorted(adj), key=lambda n: len(adj[n]))]  # no topic entity stored: the best connected
    g = GraphBuilder(limit, 4 * limit)
    sid = g.add_node(
        KG_SAMPLE,
        sample_key(dataset, sample_id),
        info.get("question") or sample_id,
        dataset=dataset,
        sample_id=sample_id,
        question=info.get("question"),
        answers=info.get("answers"),
        triples=len(triples),
        center=not focus or None,
    )
    view = _SampleGraph(g, dataset, sample_id, answers, set(topics))
    for name in starts:
        nid = view.entity(name)
        g.add_edge(sid, nid, "TOPIC" if name in topics else "FOCUS")
    frontier = list(starts)
    for _ in range(depth):
        nxt: list[str] = []
        for name in frontier:
            for h, r, t in adj[name]:
                other = t if h == name else h
                known = node_id(KG_ENTITY, kg_entity_key(dataset, sample_id, other)) in g.nodes
                view.triple(h, r, t)
                if not known and node_id(KG_ENTITY, kg_entity_key(dataset, sample_id, other)) in g.nodes:
                    nxt.append(other)
        frontier = nxt
    for name in answers:
        if node_id(KG_ENTITY, kg_entity_key(dataset, sample_id, name)) in g.nodes:
            g.add_edge(sid, node_id(KG_ENTITY, kg_entity_key(dataset, sample_id, name)), "ANSWER")
    shown = {n["name"] for n in g.nodes.values() if n["label"] == "KGEntity"}
    for h, r, t in triples:  # triples among what is shown
        if h in shown and t in shown:
            view.triple(h, r, t)
    reached = {n for name in shown for tr in adj[name] for n in (tr[0], tr[2])}
    if reached - shown:
        g.truncated = True
    return g


def kg_entity_graph(
    store: GraphStore, dataset: str, sample_id: str, name: str, limit: int
) -> GraphBuilder | None:
    """One KG entity of a sample and its triples (one fact bucket read); None when not in the sample."""
    info = get_sample(store, dataset, sample_id)
    if info is None:
        return None
    triples = get_triples(store, dataset, sample_id, name)
    if not triples:
        return None
    stored = triples[0][0] if fold(triples[0][0]) == fold(name) else triples[0][2]
    g = GraphBuilder(limit, 4 * limit)
    view = _SampleGraph(
        g, dataset, sample_id, set(info.get("a_entity") or []), set(info.get("q_entity") or [])
    )
    view.entity(stored)
    g.nodes[node_id(KG_ENTITY, kg_entity_key(dataset, sample_id, stored))]["center"] = True
    for h, r, t in triples:
        view.triple(h, r, t)
    if len({n for tr in triples for n in (tr[0], tr[2])}) > len(g.nodes):
        g.truncated = True
    return g
