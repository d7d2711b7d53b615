"""The bulk CSV pass with its fact buckets encoded in worker processes (``kg_bulk_workers``) writes what the
in-process pass writes: the same files byte for byte but the buckets, whose rows are the same set spread
over the workers' files; the same report, including a sample a worker finds too big for the importer and
a repeated id that arrives while the first is still with a worker; a worker that dies is a one-line error.
No store: the import of these files is tested in tests/test_kg_bulk_import.py (through a worker)."""

from __future__ import annotations

import csv
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.core.errors import NeoRAGError
from ingest.kg import kgr1
from ingest.kg.bulk import BulkReport, BulkWriter
from ingest.kg.bulk_facts import PART_GLOB, TOO_BIG, FactsPool
from ingest.kg.readers import read_records
from ingest.kg.records import KGRecord

FIXTURES = Path(__file__).parent / "fixtures"
KGR1 = FIXTURES / "kg_r1_golden" / "data_kg"  # case variants, isolated entities, repeated names
ROG = FIXTURES / "kg" / "rog"


def kgr1_records() -> Iterator[KGRecord]:
    folder = kgr1.find_folder(KGR1, "webqsp")
    assert folder is not None
    return kgr1.open_source(folder).records()


def write(folder: Path, records: Iterator[KGRecord], workers: int) -> tuple[BulkReport, BulkWriter]:
    folder.mkdir()
    writer = BulkWriter(folder, "webqsp", workers=workers, parallel_after=0)
    return writer.write_all(records), writer


def facts_rows(folder: Path) -> list[tuple[str, ...]]:
    rows: list[tuple[str, ...]] = []
    for path in [folder / "facts.csv", *sorted(folder.glob(PART_GLOB))]:
        with open(path, newline="", encoding="utf-8") as handle:
            rows += [tuple(row) for row in csv.reader(handle)]
    return sorted(rows)


@pytest.mark.parametrize("source", ["kgr1", "rog"])
def test_workers_write_the_files_of_the_in_process_pass(tmp_path: Path, source: str) -> None:
    def records() -> Iterator[KGRecord]:
        return kgr1_records() if source == "kgr1" else read_records(ROG, "webqsp")

    alone, _ = write(tmp_path / "alone", records(), workers=0)
    shared, writer = write(tmp_path / "shared", records(), workers=2)
    assert shared == alone and alone.samples_loaded > 2
    for path in (tmp_path / "alone").glob("*.csv"):
        if path.name != "facts.csv":
            assert (tmp_path / "shared" / path.name).read_bytes() == path.read_bytes(), path.name
    parts = sorted((tmp_path / "shared").glob(PART_GLOB))
    assert parts and facts_rows(tmp_path / "shared") == facts_rows(tmp_path / "alone")
    assert len(facts_rows(tmp_path / "alone")) >= 2
    facts_arg = next(a for a in writer.tool_args() if a.startswith("--nodes=KGFacts="))
    assert all(str(p) in facts_arg for p in parts)  # the importer reads the workers' rows too


def test_a_worker_rejects_a_sample_too_big_and_a_repeated_id_waits_for_its_verdict(tmp_path: Path) -> None:
    hub = "Hub " + "h" * 40
    big = [(hub, "rel.with.a.long.name", f"Neighbour number {i:06d} " + "n" * 30) for i in range(20_000)]

    def records() -> Iterator[KGRecord]:
        yield KGRecord("ok", [("A", "r", "B")])
        yield KGRecord("big", big, origin="big.json")  # one line of ~1.6M characters
        yield KGRecord("big", [("C", "r", "D")])  # the first was rejected: this one loads
        yield KGRecord("ok", [("E", "r", "F")])  # the first was loaded: skipped
        yield KGRecord("last", [("A", "s", "D")])

    alone, _ = write(tmp_path / "alone", records(), workers=0)
    shared, _ = write(tmp_path / "shared", records(), workers=1)
    assert shared == alone
    assert (alone.samples_loaded, alone.samples_skipped, alone.samples_rejected) == (3, 1, 1)
    assert alone.problems == [("big.json", TOO_BIG)]
    for name in ("samples.csv", "entities.csv", "rels.csv"):
        assert (tmp_path / "shared" / name).read_bytes() == (tmp_path / "alone" / name).read_bytes()
    assert facts_rows(tmp_path / "shared") == facts_rows(tmp_path / "alone")


def test_a_worker_that_dies_is_a_one_line_error(tmp_path: Path) -> None:
    answered: list[object] = []
    pool = FactsPool(tmp_path / "no-such-folder", 1, lambda item, problem: answered.append(item),
                     batch_triples=1)
    try:
        with pytest.raises(NeoRAGError, match=r"a bulk CSV worker failed \(exit 1\).*No such file"):
            for i in range(3):  # the worker cannot open its file: the first answer, at the latest, fails
                pool.submit(i, (f"d/s{i}", [("a", "r", "b")], None))
            pool.drain()
    finally:
        pool.terminate()
    assert answered == []
