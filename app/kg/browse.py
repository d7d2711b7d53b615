"""A KG sample's browsable subgraph: its triples as ``KG_FACT`` edges between whole-graph entities.

KG actions read the fact buckets (``KGFacts``); the edges are for people, drawn by Neo4j Browser
(``cypher/browser/kg_sample.cypher``, ``kg_action_path.cypher``). They are not written at load by default
(``NEORAG_KG_SAMPLE_EDGES``): on Neo4j they were about 40 % of the store and ~18 % of an online load
(docs/BENCHMARKS.md, issue 23). :func:`write_sample_edges` writes one sample's edges on demand
(``neorag kg browse DATASET SAMPLE_ID``), from its fact buckets, replacing any it had.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from app.core.errors import BadInput
from app.kg.facts import Triple, outgoing
from app.kg.keys import entity_key, sample_key
from app.store.base import GraphStore

WRITE_ROWS = 5_000  # rows per KG write statement (the loader's batches too: ingest/kg/graph_rows.py)


def sample_edge_batches(dataset: str, samples: Iterable[tuple[str, list[Triple]]],
                        rows_per_batch: int = WRITE_ROWS) -> Iterable[dict[str, Any]]:
    """``kg_sample_facts_create`` params per ``rows_per_batch`` sample triples: the batch's entities once
    each, the triples pointing at them by position, each tagged with its sample key."""
    pos: dict[str, int] = {}
    rows: list[dict[str, Any]] = []
    for skey, triples in samples:
        for h, r, t in triples:
            hi = pos.setdefault(h, len(pos))
            ti = pos.setdefault(t, len(pos))
            rows.append({"h": hi, "r": r, "t": ti, "s": skey})
            if len(rows) >= rows_per_batch:
                yield {"ents": [{"key": entity_key(dataset, name)} for name in pos], "rows": rows}
                pos, rows = {}, []
    if rows:
        yield {"ents": [{"key": entity_key(dataset, name)} for name in pos], "rows": rows}


def sample_triples(store: GraphStore, skey: str) -> list[Triple]:
    """The distinct triples of a loaded sample, read back from its fact buckets, sorted."""
    rows = store.run("kg_facts_by_sample", {"samples": [skey]})
    return sorted({t for row in rows for t in outgoing(row["facts"])})


def write_sample_edges(store: GraphStore, dataset: str, sample_id: str) -> int:
    """Write (or rewrite) one sample's ``KG_FACT`` edges and return how many; ``BadInput`` when the
    sample is not loaded."""
    skey = sample_key(dataset, sample_id)
    if not store.run("kg_sample_get", {"key": skey}):
        raise BadInput(f"no KG sample {sample_id!r} in dataset {dataset!r} (load it with `neorag kg load`)",
                       status=404, field="sample_id")
    triples = sample_triples(store, skey)
    store.run("kg_sample_facts_delete", {"samples": [skey]})
    for params in sample_edge_batches(dataset, [(skey, triples)]):
        store.run("kg_sample_facts_create", params)
    return len(triples)
