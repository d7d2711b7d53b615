"""Loads KG records into the graph: batched, idempotent, ``replace`` swaps a sample's triples.

Per chunk of records: look up which samples exist (one read), release the old triples of replaced
samples, then write the entities the graph lacks (CREATE, after one read of the names this load has not
seen), whole-graph edges (CREATE when an end is an entity this load created, else MERGE; refcounted by
``KG_REL.samples``, see :mod:`ingest.kg.graph_rows`), per-sample fact buckets (CREATE, see
:mod:`app.kg.facts`), each sample's triples as ``KG_FACT`` edges when asked (its subgraph for Neo4j
Browser; off by default, written on demand by :mod:`app.kg.browse`) and finally the sample nodes
with their topic / answer links, so a visible sample is always complete. Writes run on two ordered
background lanes (whole graph, per-sample facts) while the next chunk is prepared. Each chunk bumps the
dataset's generation, which invalidates read caches in every process.
"""

from __future__ import annotations

import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from app.core.errors import BadInput
from app.core.gc_freeze import frozen_heap
from app.kg.browse import WRITE_ROWS, sample_edge_batches
from app.kg.facts import encode_facts, outgoing
from app.kg.keys import entity_key, sample_key
from app.kg.schema import ensure_kg_schema
from app.store.base import GraphStore, Prepared, chunked
from ingest.kg import kgr1
from ingest.kg.graph_rows import LoadedGraph, edge_batches
from ingest.kg.readers import read_records
from ingest.kg.records import KGRecord, Triple

Progress = Callable[[int, int], None]
CHUNK_TRIPLES = 20_000
CHUNK_SAMPLES = 200


@dataclass
class LoadReport:
    """What a load did."""

    dataset: str
    samples_loaded: int = 0
    samples_replaced: int = 0
    samples_skipped: int = 0
    triples: int = 0
    duplicates_collapsed: int = 0
    seconds: float = 0.0

    @property
    def triples_per_s(self) -> float:
        return self.triples / self.seconds if self.seconds > 0 else 0.0

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "triples_per_s": round(self.triples_per_s, 1)}


class _Writer:
    """Runs statements on two ordered background lanes (lane 0: whole graph and every other write that
    locks entity nodes, so Neo4j's two lanes never deadlock; lane 1: per-sample fact buckets and samples).

    Statements are prepared (parameters encoded, :meth:`GraphStore.prepare`) on the caller's thread, so a
    lane only sends them: the store never waits for the next statement's encoding. ``after`` makes a
    statement wait for earlier futures of the other lane (samples are written only once complete).
    At most ``MAX_PENDING`` statements wait, so preparing chunks never runs far ahead of the store.
    """

    MAX_PENDING = 16

    def __init__(self, store: GraphStore) -> None:
        self.store = store
        self.lanes = [ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"kg-writer-{i}") for i in (0, 1)]
        self.pending: list[Future[Any]] = []

    def _run(self, prepared: Prepared, after: list[Future[Any]]) -> Any:
        for fut in after:
            fut.result()
        return self.store.run_prepared(prepared)

    def submit(self, name: str, rows: list[Any], lane: int = 0, after: list[Future[Any]] | None = None,
               **extra: Any) -> list[Future[Any]]:
        futures = [self.lanes[lane].submit(self._run, self.store.prepare(name, {**extra, "rows": batch}),
                                           after or [])
                   for batch in chunked(rows, WRITE_ROWS)]
        self.pending.extend(futures)
        self._reap()
        return futures

    def call(self, name: str, params: dict[str, Any], lane: int = 0,
             after: list[Future[Any]] | None = None) -> list[Future[Any]]:
        fut = self.lanes[lane].submit(self._run, self.store.prepare(name, params), after or [])
        self.pending.append(fut)
        self._reap()
        return [fut]

    def _reap(self) -> None:
        for fut in [f for f in self.pending if f.done()]:
            fut.result()  # re-raise a failed write here
        self.pending = [f for f in self.pending if not f.done()]
        while len(self.pending) > self.MAX_PENDING:
            self.pending.pop(0).result()

    def drain(self) -> None:
        for fut in self.pending:
            fut.result()
        self.pending = []

    def close(self) -> None:
        for lane in self.lanes:
            lane.shutdown(wait=True, cancel_futures=True)


def _validate_dataset(dataset: str) -> str:
    name = dataset.strip()
    if not name or "/" in name or "|" in name:
        raise BadInput("dataset must be a non-empty name without '/' or '|'", field="dataset")
    return name


def load_path(store: GraphStore, path: Path, dataset: str, split: str | None = None,
              replace: bool = False, kb: Path | None = None, hops: int | None = None,
              progress: Progress | None = None, entity_names: str = "auto",
              sample_edges: bool = False) -> LoadReport:
    """Load every record found at ``path`` (see :func:`ingest.kg.readers.read_records`); a KG-R1
    dataset folder (:mod:`ingest.kg.kgr1`) also stores its relation vocabulary. ``sample_edges``: also
    write every sample's ``KG_FACT`` edges (``NEORAG_KG_SAMPLE_EDGES``; else one sample's on demand,
    :func:`app.kg.browse.write_sample_edges`)."""
    folder = kgr1.find_folder(Path(path), dataset)
    if folder is not None:
        source = kgr1.open_source(folder, entity_names, split)
        ensure_kg_schema(store)
        kgr1.store_relation_vocab(store, _validate_dataset(dataset), source.relations)
        return load_records(store, dataset, source.records(), replace=replace, progress=progress,
                            sample_edges=sample_edges)
    records = read_records(Path(path), dataset, split=split, kb=kb, hops=hops)
    return load_records(store, dataset, records, replace=replace, split=split, progress=progress,
                        sample_edges=sample_edges)


def load_records(store: GraphStore, dataset: str, records: Iterable[KGRecord], replace: bool = False,
                 split: str | None = None, progress: Progress | None = None,
                 sample_edges: bool = False) -> LoadReport:
    """Load RoG-shaped records into ``dataset``; existing samples are skipped unless ``replace``;
    ``sample_edges`` as in :func:`load_path`."""
    dataset = _validate_dataset(dataset)
    ensure_kg_schema(store)
    report = LoadReport(dataset)
    started = time.perf_counter()
    writer = _Writer(store)
    graph = LoadedGraph(dataset, sample_edges=sample_edges)
    seen: set[str] = set()
    try:
        with frozen_heap() as heap:  # the collector never walks what the load keeps (graph, seen)
            chunk: list[KGRecord] = []
            size = 0
            for record in records:
                if record.sample_id in seen:
                    report.samples_skipped += 1
                    continue
                seen.add(record.sample_id)
                chunk.append(record)
                size += len(record.triples)
                if size >= CHUNK_TRIPLES or len(chunk) >= CHUNK_SAMPLES:
                    _load_chunk(store, writer, graph, chunk, replace, split, report)
                    chunk, size = [], 0
                    heap.step()
                    if progress:
                        progress(report.samples_loaded + report.samples_replaced, report.triples)
            if chunk:
                _load_chunk(store, writer, graph, chunk, replace, split, report)
            writer.drain()
    finally:
        writer.close()
    report.seconds = time.perf_counter() - started
    if progress:
        progress(report.samples_loaded + report.samples_replaced, report.triples)
    return report


def _triple_rows(dataset: str, counts: Counter[Triple]) -> list[dict[str, Any]]:
    """Distinct whole-graph rows ``{h, r, t, n}`` (a statement never sees the same edge twice)."""
    return [{"h": entity_key(dataset, h), "r": r, "t": entity_key(dataset, t), "n": n}
            for (h, r, t), n in counts.items()]


def _link_rows(dataset: str, key: str, record: KGRecord) -> list[dict[str, str]]:
    """``kg_sample_links_create`` rows: the sample's question (topic) and answer entities."""
    roles = [("topic", n) for n in dict.fromkeys(record.q_entity)]
    roles += [("answer", n) for n in dict.fromkeys(record.a_entity)]
    return [{"key": key, "entity": entity_key(dataset, name), "role": role} for role, name in roles]


def _release_old(store: GraphStore, writer: _Writer, dataset: str, skeys: list[str]) -> int:
    """Release replaced samples' triples from the whole graph and delete their fact nodes."""
    writer.drain()  # read the old facts only after earlier writes landed
    counts: Counter[Triple] = Counter()
    for row in store.run("kg_facts_by_sample", {"samples": skeys}):
        counts.update(outgoing(row["facts"]))
    rows = _triple_rows(dataset, counts)
    writer.submit("kg_rel_release", rows)
    writer.submit("kg_rel_prune", rows)  # a separate statement: FalkorDB skips SET ... WITH ... DELETE
    writer.call("kg_facts_delete", {"samples": skeys}, lane=1)
    writer.call("kg_sample_facts_delete", {"samples": skeys})  # lane 0: they lock entity nodes
    writer.call("kg_sample_links_delete", {"samples": skeys})
    return len(rows)


def _names(counts: Counter[Triple]) -> set[str]:
    return {name for h, _, t in counts for name in (h, t)}


def _load_chunk(store: GraphStore, writer: _Writer, graph: LoadedGraph, chunk: list[KGRecord],
                replace: bool, split: str | None, report: LoadReport) -> None:
    dataset = graph.dataset
    keys = [sample_key(dataset, r.sample_id) for r in chunk]
    existing = {row["key"]: row for row in store.run("kg_sample_lookup", {"keys": keys})}
    to_write: list[tuple[str, KGRecord]] = []
    replaced: list[str] = []
    for key, record in zip(keys, chunk, strict=True):
        if key in existing:
            if not replace:
                report.samples_skipped += 1
                continue
            replaced.append(key)
        to_write.append((key, record))
    if replaced:
        _release_old(store, writer, dataset, replaced)
    old_triples = sum(int(existing[k].get("n_triples") or 0) for k in replaced)
    rel_counts: Counter[Triple] = Counter()
    fact_rows: list[dict[str, Any]] = []
    sample_rows: list[dict[str, Any]] = []
    edges: list[tuple[str, list[Triple]]] = []
    link_rows: list[dict[str, str]] = []
    new_triples = 0
    for key, record in to_write:
        distinct = sorted(set(record.triples))
        report.duplicates_collapsed += len(record.triples) - len(distinct)
        new_triples += len(distinct)
        buckets, rows = encode_facts(key, distinct, record.extra)
        fact_rows.extend(rows)
        edges.append((key, distinct))
        link_rows.extend(_link_rows(dataset, key, record))
        rel_counts.update(distinct)
        props: dict[str, Any] = {
            "dataset": dataset, "sample_id": record.sample_id, "question": record.question,
            "answers": record.answers, "q_entity": record.q_entity, "a_entity": record.a_entity,
            "n_triples": len(distinct), "relations": sorted({r for _, r, _ in distinct}),
            "facts_buckets": buckets,
        }
        if record.split or split:
            props["split"] = record.split or split
        sample_rows.append({"key": key, "props": props})
    whole = writer.submit("kg_entity_create", graph.new_entities(store, _names(rel_counts)),
                          dataset=dataset)
    create, merge = graph.split_edges(rel_counts)
    for name, counts in (("kg_rel_create", create), ("kg_rel_merge_at", merge)):
        for params in edge_batches(dataset, counts):
            whole += writer.call(name, params)
    browsable = edges if graph.sample_edges else []
    for params in sample_edge_batches(dataset, browsable):  # lane 0, after the entities
        whole += writer.call("kg_sample_facts_create", params)
    writer.submit("kg_facts_create", fact_rows, lane=1)
    # last: a visible sample is complete
    samples = writer.submit("kg_sample_upsert", sample_rows, lane=1, after=whole)
    writer.submit("kg_sample_links_create", link_rows, after=samples)
    added = len(to_write) - len(replaced)
    writer.call("kg_dataset_touch", {"name": dataset, "samples": added, "triples": new_triples - old_triples,
                                     "generation": uuid.uuid4().hex}, lane=1)
    report.samples_loaded += added
    report.samples_replaced += len(replaced)
    report.triples += new_triples
