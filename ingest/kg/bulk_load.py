"""``neorag kg load --bulk`` / ``neorag neo4j import``: a KG source into a fresh local Neo4j database.

Reads the sources the online loader reads (:func:`ingest.kg.readers.read_records`, KG-R1's own layout),
strictly (a bad sample is reported and skipped), writes the import CSV (:mod:`ingest.kg.bulk`) in a work
dir next to the data dir, runs Neo4j's importer (:mod:`app.store.neo4j_import`), starts the server,
creates the KG constraints and indexes and waits until they are online, then sets what CSV cannot carry
and writes the ``KGDataset`` node (counts, load order, generation, a KG-R1 relation vocabulary).
"""

from __future__ import annotations

import os
import tempfile
import time
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from app.core.config import Settings
from app.kg.schema import ensure_kg_schema
from app.store.base import chunked
from app.store.factory import make_store
from app.store.neo4j_import import check_target, run_import
from app.store.neo4j_server import Neo4jInfo, Neo4jServer
from ingest.kg import kgr1
from ingest.kg.bulk import BulkReport, BulkWriter
from ingest.kg.loader import _validate_dataset
from ingest.kg.readers import read_records
from ingest.kg.records import KGRecord

INDEX_WAIT_S = 3600


@dataclass
class BulkResult:
    """A finished bulk load: what was read and written, the server now serving it, timings."""

    report: BulkReport
    info: Neo4jInfo
    kept: Path | None  # the previous database, kept aside (--force)
    seconds: float
    csv_seconds: float
    import_seconds: float

    @property
    def triples_per_s(self) -> float:
        return self.report.distinct_triples / self.seconds if self.seconds > 0 else 0.0


def bulk_workers(settings: Settings) -> int:
    """``kg_bulk_workers``, or one per CPU core (at most 4) when unset: on 2 cores, 2 workers beside the
    reading process took the 3M-triple CSV pass from 14.1 to 9.5 s, 1 worker to 11.8 s, 3 to 9.4-10.7 s
    (``bench/bulk_csv.py``, docs/BENCHMARKS.md)."""
    if settings.kg_bulk_workers is not None:
        return settings.kg_bulk_workers
    return min(4, os.cpu_count() or 1)


def bulk_load_path(server: Neo4jServer, settings: Settings, path: Path, dataset: str,
                   split: str | None = None, kb: Path | None = None, hops: int | None = None,
                   entity_names: str = "auto", force: bool = False) -> BulkResult:
    """Bulk-load ``path`` as ``dataset`` into the database of ``server`` (see the module docstring);
    the server is left running."""
    dataset = _validate_dataset(dataset)
    database = settings.neo4j_database
    check_target(server, database, force)  # before any work: a refusal costs nothing
    started = time.perf_counter()
    server.data_dir.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".neorag-import-", dir=server.data_dir.parent) as tmp:
        writer = BulkWriter(Path(tmp), dataset, split, sample_edges=settings.kg_sample_edges,
                            workers=bulk_workers(settings))
        records: Iterable[KGRecord]
        relations: list[str] | None = None
        folder = kgr1.find_folder(Path(path), dataset)
        if folder is not None:
            source = kgr1.open_source(folder, entity_names, split, on_bad=writer.report.reject)
            records, relations = source.records(), source.relations
        else:
            records = read_records(Path(path), dataset, split=split, kb=kb, hops=hops,
                                   on_bad=writer.report.reject)
        report = writer.write_all(records)
        csv_done = time.perf_counter()
        kept = run_import(server, database, writer.tool_args(), Path(tmp), force)
        import_done = time.perf_counter()
    info = server.start(settings.neo4j_start_timeout_s)
    _finish_database(server, info, settings, report, relations)
    return BulkResult(report, info, kept, time.perf_counter() - started, csv_done - started,
                      import_done - csv_done)


def _finish_database(server: Neo4jServer, info: Neo4jInfo, settings: Settings, report: BulkReport,
                     relations: list[str] | None) -> None:
    """Indexes (waited for), the array values CSV cannot carry, the ``KGDataset`` node."""
    store = make_store(settings.model_copy(update={"backend": "neo4j", "neo4j_uri": info.uri,
                                                   "neo4j_password": server.password}))
    try:
        ensure_kg_schema(store)
        store.run("kg_await_indexes", {"seconds": INDEX_WAIT_S})
        for rows in chunked(report.fixups, 5_000):
            store.run("kg_sample_upsert", {"rows": rows})
        if relations is not None:
            kgr1.store_relation_vocab(store, report.dataset, relations)
        store.run("kg_dataset_touch", {"name": report.dataset, "samples": report.samples_loaded,
                                       "triples": report.triples, "generation": uuid.uuid4().hex})
    finally:
        store.close()
