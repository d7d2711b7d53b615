"""Reads KG inputs, detected by content, as a stream of :class:`KGRecord`.

Accepted: RoG parquet files (or a folder of them, e.g. an HF snapshot), RoG JSON / JSONL,
the KG-R1 per-sample layout ``{base}/{dataset}/subgraphs/{sample_id}.json`` (``{"triples": [...]}``
or a bare list of triples), KG-R1's own data folder (``entities.txt``, ``relations.txt``,
``*_simple.json``: :mod:`ingest.kg.kgr1`), and PathQuestion question files with their TSV KB.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from app.core.errors import BadInput
from ingest.kg import kgr1
from ingest.kg.pathquestion import is_pathquestion_file, read_pathquestion
from ingest.kg.records import KGRecord, clean_triples


def read_records(path: Path, dataset: str, split: str | None = None, kb: Path | None = None,
                 hops: int | None = None) -> Iterator[KGRecord]:
    """Yield the records found at ``path`` (file or folder), detected by content."""
    path = Path(path)
    if not path.exists():
        raise BadInput(f"{path} does not exist", field="path")
    if path.is_dir():
        yield from _read_dir(path, dataset, split)
        return
    suffix = path.suffix.lower()
    if suffix == ".parquet":
        yield from _read_parquet(path)
    elif suffix == ".jsonl":
        yield from _read_jsonl(path)
    elif suffix == ".json":
        yield from _read_json(path)
    elif is_pathquestion_file(path):
        yield from read_pathquestion(path, kb=kb, hops=hops)
    else:
        raise BadInput(
            f"cannot tell what {path.name} holds: expected RoG parquet/JSON/JSONL, a subgraph folder, "
            "or a PathQuestion question file (question<TAB>answer(alt/)<TAB>h#r#...#<end>#answer)",
            field="path",
        )


def _read_dir(path: Path, dataset: str, split: str | None) -> Iterator[KGRecord]:
    folder = kgr1.find_folder(path, dataset)
    if folder is not None:
        yield from kgr1.open_source(folder, split=split).records()
        return
    for candidate in (path / dataset / "subgraphs", path / "subgraphs", path):
        files = sorted(candidate.glob("*.json")) if candidate.is_dir() else []
        if files and candidate.name == "subgraphs" or (candidate == path and files):
            for file in files:
                yield from _read_json(file)
            return
    parquet = sorted(p for p in path.rglob("*.parquet") if split is None or p.name.startswith(split))
    if parquet:
        for file in parquet:
            yield from _read_parquet(file)
        return
    raise BadInput(
        f"{path} holds no subgraphs/*.json and no *.parquet"
        + (f" for split {split!r}" if split else ""),
        field="path",
    )


def _read_parquet(path: Path) -> Iterator[KGRecord]:
    import pyarrow.parquet as pq

    table = pq.ParquetFile(path)
    for batch in table.iter_batches(batch_size=256):
        for row in batch.to_pylist():
            yield KGRecord.from_rog(row)


def _read_jsonl(path: Path) -> Iterator[KGRecord]:
    with path.open(encoding="utf-8") as handle:
        for lineno, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise BadInput(f"{path.name} line {lineno} is not JSON: {exc.msg}", field="path") from None
            yield KGRecord.from_rog(row)


def _read_json(path: Path) -> Iterator[KGRecord]:
    try:
        data: Any = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise BadInput(f"{path.name} is not JSON: {exc.msg}", field="path") from None
    if isinstance(data, dict) and "triples" in data and "graph" not in data:
        yield KGRecord(sample_id=path.stem, triples=clean_triples(data["triples"]))
    elif isinstance(data, dict):
        yield KGRecord.from_rog(data)
    elif isinstance(data, list) and (not data or isinstance(data[0], list | tuple)):
        yield KGRecord(sample_id=path.stem, triples=clean_triples(data))
    elif isinstance(data, list):
        for row in data:
            yield KGRecord.from_rog(row)
    else:
        raise BadInput(f"{path.name} holds neither RoG records nor triples", field="path")
