"""Source files as ``(:Source)`` nodes: what ``GET /documents`` lists (one per ingested file).

A Source is keyed by the file's document id (``doc-<sha1(path)[:16]>``, the same id as the file's
Document for whole-file formats) and holds its content hash, size, counts and when it was last
(re)ingested. Written at the end of every ingest for the files it changed (and for files that have
no Source yet, e.g. graphs ingested before Sources existed); removed with the file's last chunk.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.store.base import GraphStore
from ingest.load import Fingerprint, file_doc_id

if TYPE_CHECKING:
    from ingest.chunk import ChunkRec
    from ingest.write import GraphWriter

@dataclass
class SourcePlan:
    """Chunk ids of one source file in source order (no texts: memory stays small)."""

    source: str
    ids: list[str] = field(default_factory=list)
    pos: dict[str, int] = field(default_factory=dict)
    doc_chunks: dict[str, list[str]] = field(default_factory=dict)
    title: str = ""                        # the first document's title (the Source's title)
    fingerprint: Fingerprint | None = None  # content hash and size of the file

    def add(self, chunk: ChunkRec) -> None:
        self.pos[chunk.id] = len(self.ids)
        self.ids.append(chunk.id)
        self.doc_chunks.setdefault(chunk.doc_id, []).append(chunk.id)


def now_iso() -> str:
    """The current UTC time, ISO 8601 to the second (``2026-11-23T10:28:00Z``)."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def source_id(path: str) -> str:
    """The Source id of a file path (its whole-file document id)."""
    return file_doc_id(path)


def stored_hashes(store: GraphStore, paths: Iterable[str]) -> dict[str, str | None]:
    """Content hash stored on each path's Source (paths without a Source are absent)."""
    rows = [{"id": source_id(p)} for p in paths]
    out: dict[str, str | None] = {}
    for i in range(0, len(rows), 1000):
        for r in store.run("document_sources_by_ids", {"ids": [x["id"] for x in rows[i:i + 1000]]}):
            out[str(r["path"])] = r.get("content_hash")
    return out


def source_row(path: str, title: str, fp: Fingerprint, chunks: int, documents: int, entities: int,
               ingested_at: str) -> dict[str, Any]:
    """One ``document_source_upsert`` row."""
    return {"id": source_id(path), "path": path, "name": Path(path).name, "title": title,
            "content_hash": fp.sha256, "bytes": fp.bytes, "chunks": chunks, "documents": documents,
            "entities": entities, "ingested_at": ingested_at}


def write_sources(store: GraphStore, rows: list[dict[str, Any]], batch_size: int) -> None:
    """Create or update Sources."""
    store.run_batched("document_source_upsert", rows, batch_size)


def prune_sources(store: GraphStore, paths: Iterable[str], batch_size: int) -> None:
    """Delete the Sources of the given paths that no chunk refers to any more."""
    store.run_batched("document_source_prune", ({"id": source_id(p), "path": p} for p in paths), batch_size)


def record_sources(writer: GraphWriter, plans: Mapping[str, SourcePlan],
                   per_source: Mapping[str, Mapping[str, list[str]]], changed: set[str],
                   stored: Mapping[str, str | None], removed: Iterable[str]) -> None:
    """After an ingest: write the Source of every planned file that the run touched (``per_source``:
    entity keys per chunk), whose content changed, or that has no Source yet; prune the Sources of
    removed files and of files left without chunks."""
    stamp = now_iso()
    rows = []
    for path, plan in plans.items():
        if not plan.ids or plan.fingerprint is None:
            continue
        if path not in per_source and path not in changed and path in stored:
            continue
        ents = per_source.get(path)
        if ents is None:
            ents = writer.chunk_entities(plan.ids)
        entities = len({key for keys in ents.values() for key in keys})
        rows.append(source_row(path, plan.title, plan.fingerprint, len(plan.ids), len(plan.doc_chunks),
                               entities, stamp))
    write_sources(writer.store, rows, writer.batch_size)
    gone = sorted(set(removed) | {p for p, plan in plans.items() if not plan.ids})
    prune_sources(writer.store, gone, writer.batch_size)
