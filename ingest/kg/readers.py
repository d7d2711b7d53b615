"""Reads KG inputs, detected by content, as a stream of :class:`KGRecord`.

Accepted: RoG parquet files (or a folder of them, e.g. an HF snapshot), RoG JSON / JSONL,
the KG-R1 per-sample layout ``{base}/{dataset}/subgraphs/{sample_id}.json`` (``{"triples": [...]}``
or a bare list of triples), KG-R1's own data folder (``entities.txt``, ``relations.txt``,
``*_simple.json``: :mod:`ingest.kg.kgr1`), and PathQuestion question files with their TSV KB.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from app.core.errors import BadInput
from ingest.kg import kgr1
from ingest.kg.pathquestion import is_pathquestion_file, read_pathquestion
from ingest.kg.records import KGRecord, rog_problem

# Strict reading (the bulk import): called with (where, reason) for a sample that is skipped, e.g.
# ("train.jsonl line 3", "not JSON: ..."); without it a malformed file raises BadInput as before.
OnBad = Callable[[str, str], None]


def read_records(path: Path, dataset: str, split: str | None = None, kb: Path | None = None,
                 hops: int | None = None, on_bad: OnBad | None = None) -> Iterator[KGRecord]:
    """Yield the records found at ``path`` (file or folder), detected by content. With ``on_bad``, a
    sample that cannot be loaded whole (not JSON, no id, a triple that is not 3 non-empty values) is
    reported to it and skipped instead of failing the read (or, for a bad triple, of being trimmed)."""
    path = Path(path)
    if not path.exists():
        raise BadInput(f"{path} does not exist", field="path")
    if path.is_dir():
        yield from _read_dir(path, dataset, split, on_bad)
        return
    suffix = path.suffix.lower()
    if suffix == ".parquet":
        yield from _read_parquet(path, on_bad)
    elif suffix == ".jsonl":
        yield from _read_jsonl(path, on_bad)
    elif suffix == ".json":
        yield from _read_json(path, on_bad)
    elif is_pathquestion_file(path):
        yield from read_pathquestion(path, kb=kb, hops=hops)
    else:
        raise BadInput(
            f"cannot tell what {path.name} holds: expected RoG parquet/JSON/JSONL, a subgraph folder, "
            "or a PathQuestion question file (question<TAB>answer(alt/)<TAB>h#r#...#<end>#answer)",
            field="path",
        )


def _read_dir(path: Path, dataset: str, split: str | None, on_bad: OnBad | None) -> Iterator[KGRecord]:
    folder = kgr1.find_folder(path, dataset)
    if folder is not None:
        yield from kgr1.open_source(folder, split=split, on_bad=on_bad).records()
        return
    for candidate in (path / dataset / "subgraphs", path / "subgraphs", path):
        files = sorted(candidate.glob("*.json")) if candidate.is_dir() else []
        if files and candidate.name == "subgraphs" or (candidate == path and files):
            for file in files:
                yield from _read_json(file, on_bad)
            return
    parquet = sorted(p for p in path.rglob("*.parquet") if split is None or p.name.startswith(split))
    if parquet:
        for file in parquet:
            yield from _read_parquet(file, on_bad)
        return
    raise BadInput(
        f"{path} holds no subgraphs/*.json and no *.parquet"
        + (f" for split {split!r}" if split else ""),
        field="path",
    )


def _rog(row: Any, where: str, on_bad: OnBad | None) -> Iterator[KGRecord]:
    """The record of a RoG row (none, reported, when ``on_bad`` is given and the row is bad: checked
    in full only when the record lost a triple, so a good row is read once)."""
    try:
        record = KGRecord.from_rog(row)
    except (ValueError, AttributeError, TypeError):
        if on_bad is None:
            raise
        on_bad(where, rog_problem(row) or "not a RoG record")
        return
    if on_bad is not None and len(record.triples) != len(row.get("graph", row.get("triples")) or []):
        on_bad(where, rog_problem(row) or "a triple is not 3 non-empty values")
        return
    record.origin = where
    yield record


def _read_parquet(path: Path, on_bad: OnBad | None = None) -> Iterator[KGRecord]:
    import pyarrow.parquet as pq

    table = pq.ParquetFile(path)
    index = 0
    for batch in table.iter_batches(batch_size=256):
        for row in batch.to_pylist():
            index += 1
            yield from _rog(row, f"{path.name} row {index}", on_bad)


def _read_jsonl(path: Path, on_bad: OnBad | None = None) -> Iterator[KGRecord]:
    with path.open(encoding="utf-8") as handle:
        for lineno, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                where = f"{path.name} line {lineno}"
                if on_bad is None:
                    raise BadInput(f"{where} is not JSON: {exc.msg}", field="path") from None
                on_bad(where, f"not JSON: {exc.msg}")
                continue
            yield from _rog(row, f"{path.name} line {lineno}", on_bad)


def _read_json(path: Path, on_bad: OnBad | None = None) -> Iterator[KGRecord]:
    try:
        data: Any = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        if on_bad is None:
            raise BadInput(f"{path.name} is not JSON: {exc.msg}", field="path") from None
        on_bad(f"{path.name} line {exc.lineno}", f"not JSON: {exc.msg}")
        return
    if isinstance(data, dict) and "triples" in data and "graph" not in data:
        yield from _rog({"id": path.stem, "graph": data["triples"]}, path.name, on_bad)
    elif isinstance(data, dict):
        yield from _rog(data, path.name, on_bad)
    elif isinstance(data, list) and (not data or isinstance(data[0], list | tuple)):
        yield from _rog({"id": path.stem, "graph": data}, path.name, on_bad)
    elif isinstance(data, list):
        for index, row in enumerate(data, 1):
            yield from _rog(row, f"{path.name} record {index}", on_bad)
    else:
        raise BadInput(f"{path.name} holds neither RoG records nor triples", field="path")
