"""In-process KG API for agents (StructGPT, CONVINSE, the function-call bridge).

``sample_id=None`` answers over the whole dataset graph (``KGEntity``/``KG_REL``); a sample id
answers inside that sample's subgraph only (``KGFacts`` buckets), with the same entity matching as the
actions: exact name first, else trimmed case-insensitive (smallest matching name wins).
"""

from __future__ import annotations

from typing import Any

from app.kg.facts import Facts, resolve_names
from app.kg.keys import entity_key, entity_lkey, sample_key
from app.store.base import GraphStore

Triple = tuple[str, str, str]
DIRECTIONS = ("both", "out", "in")


def find_entities(store: GraphStore, dataset: str, name: str) -> list[str]:
    """Whole-graph names matching ``name``: [name] when exact, else the case-insensitive matches."""
    rows = store.run("kg_entity_by_lkey", {"keys": [entity_lkey(dataset, name)]})
    names = sorted({r["name"] for r in rows})
    if name in names:
        return [name]
    return names


def resolve_entity(store: GraphStore, dataset: str, name: str, sample_id: str | None = None) -> str | None:
    """The stored name for ``name`` (whole graph, or within one sample), or None."""
    if sample_id is None:
        found = find_entities(store, dataset, name)
        return found[0] if found else None
    facts = _sample_facts(store, dataset, sample_id, name)
    return facts.name if facts else None


def sample_buckets(store: GraphStore, skey: str) -> int | None:
    """How many fact buckets sample ``skey`` has (None when the sample is not loaded)."""
    rows = store.run("kg_sample_lookup", {"keys": [skey]})
    return int(rows[0].get("buckets") or 1) if rows else None


def _sample_names(store: GraphStore, dataset: str, sample_id: str, names: list[str]) -> dict[str, Facts]:
    """The facts of each of ``names`` found in the sample (two round trips: bucket count, buckets)."""
    skey = sample_key(dataset, sample_id)
    buckets = sample_buckets(store, skey)
    if buckets is None:
        return {}
    found = resolve_names(store, {name: (skey, buckets, name) for name in names})
    return {name: facts for name, facts in found.items() if facts is not None}


def _sample_facts(store: GraphStore, dataset: str, sample_id: str, name: str) -> Facts | None:
    return _sample_names(store, dataset, sample_id, [name]).get(name)


def match_sample_names(store: GraphStore, dataset: str, sample_id: str, names: list[str]) -> dict[str, str]:
    """``{name: stored name}`` for each of ``names`` found in the sample (exact, else case-insensitive)."""
    return {name: facts.name for name, facts in _sample_names(store, dataset, sample_id, names).items()}


def get_relations(store: GraphStore, dataset: str, sample_id: str | None, entity: str,
                  direction: str = "both") -> list[str]:
    """Sorted distinct relations touching ``entity``; direction 'both', 'out' (entity is head) or 'in'."""
    return sorted({r for r, d in get_relations_directed(store, dataset, sample_id, entity)
                   if direction == "both" or d == direction})


def get_relations_directed(store: GraphStore, dataset: str, sample_id: str | None,
                           entity: str) -> list[tuple[str, str]]:
    """Sorted (relation, direction) pairs touching ``entity``; direction 'out' (head) or 'in' (tail)."""
    if sample_id is not None:
        facts = _sample_facts(store, dataset, sample_id, entity)
        if facts is None:
            return []
        pairs = {(r, "out") for r in facts.out_rel} | {(r, "in") for r in facts.in_rel}
        return sorted(pairs)
    name = resolve_entity(store, dataset, entity)
    if name is None:
        return []
    rows = store.run("kg_graph_relations", {"key": entity_key(dataset, name)})
    return sorted({(r["relation"], r["direction"]) for r in rows})


def get_triples(store: GraphStore, dataset: str, sample_id: str | None, entity: str,
                relations: list[str] | None = None, direction: str = "both",
                limit_per_relation: int | None = None) -> list[Triple]:
    """Sorted distinct (head, relation, tail) triples touching ``entity`` via ``relations`` (None: all)."""
    if sample_id is not None:
        facts = _sample_facts(store, dataset, sample_id, entity)
        if facts is None:
            return []
        name = facts.name
        found: set[Triple] = set()
        if direction in ("both", "out"):
            found |= {(name, r, t) for r, t in zip(facts.out_rel, facts.out_ent, strict=False)}
        if direction in ("both", "in"):
            found |= {(h, r, name) for r, h in zip(facts.in_rel, facts.in_ent, strict=False)}
    else:
        resolved = resolve_entity(store, dataset, entity)
        if resolved is None:
            return []
        name = resolved
        rels = relations if relations is not None else [
            r for r, _ in get_relations_directed(store, dataset, None, name)]
        rows = store.run("kg_graph_triples", {"key": entity_key(dataset, name), "relations": list(rels)})
        found = {(r["head"], r["relation"], r["tail"]) for r in rows}
        if direction == "out":
            found = {t for t in found if t[0] == name}
        elif direction == "in":
            found = {t for t in found if t[2] == name}
    if relations is not None:
        wanted = set(relations)
        found = {t for t in found if t[1] in wanted}
    ordered = sorted(found)
    if limit_per_relation is None:
        return ordered
    counts: dict[str, int] = {}
    out = []
    for triple in ordered:
        n = counts.get(triple[1], 0)
        if n < limit_per_relation:
            out.append(triple)
            counts[triple[1]] = n + 1
    return out


def get_tail_entities(store: GraphStore, dataset: str, sample_id: str | None, entity: str,
                      relation: str) -> list[str]:
    """Sorted tails t with (entity, relation, t)."""
    return sorted({t for _, _, t in get_triples(store, dataset, sample_id, entity, [relation], "out")})


def get_head_entities(store: GraphStore, dataset: str, sample_id: str | None, entity: str,
                      relation: str) -> list[str]:
    """Sorted heads h with (h, relation, entity)."""
    return sorted({h for h, _, _ in get_triples(store, dataset, sample_id, entity, [relation], "in")})


def list_datasets(store: GraphStore) -> list[dict[str, Any]]:
    """Loaded datasets: ``[{name, samples, triples}]``."""
    return [{"name": r["name"], "samples": int(r.get("samples") or 0), "triples": int(r.get("triples") or 0)}
            for r in store.run("kg_datasets")]


def get_sample(store: GraphStore, dataset: str, sample_id: str) -> dict[str, Any] | None:
    """A sample's stored question, answers, q_entity, a_entity, n_triples (None when absent)."""
    rows = store.run("kg_sample_get", {"key": sample_key(dataset, sample_id)})
    return rows[0] if rows else None


class StoreKGView:
    """The ``KGView`` protocol of :mod:`app.reasoning.structgpt` over the store (sample or whole graph)."""

    def __init__(self, store: GraphStore, dataset: str, sample_id: str | None = None) -> None:
        self.store, self.dataset, self.sample_id = store, dataset, sample_id

    def resolve(self, entity: str) -> str | None:
        return resolve_entity(self.store, self.dataset, entity, self.sample_id)

    def relations(self, entity: str) -> list[tuple[str, str]]:
        return get_relations_directed(self.store, self.dataset, self.sample_id, entity)

    def triples(self, entity: str, relation: str, direction: str) -> list[Triple]:
        return get_triples(self.store, self.dataset, self.sample_id, entity, [relation], direction)
