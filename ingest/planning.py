"""Pass 1 of an ingest (load and chunk every file, keeping ids only), the decision per stored chunk
(skip, re-embed or re-extract; stale chunks deleted), and pass 2's batches of the chunks that need work."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

from ingest.chunk import ChunkRec, chunk_document
from ingest.load import LoadedFile, LoadError, SourceDoc, load_file
from ingest.paths import outside_roots
from ingest.run_context import RunContext
from ingest.sources import SourcePlan, stored_hashes

log = logging.getLogger(__name__)


def _load(ctx: RunContext, path: Path, seen: set[str], fingerprint: bool = False) -> LoadedFile | None:
    refused = outside_roots(path, ctx.options.allowed_roots)
    if refused is not None:
        _file_error(ctx, path, refused)
        return None
    try:
        loaded = load_file(path, seen, fingerprint, ctx.services.settings.ingest_max_file_chars)
    except LoadError as exc:
        _file_error(ctx, path, str(exc))
        return None
    except (OSError, UnicodeError, ValueError, RecursionError) as exc:
        _file_error(ctx, path, f"{type(exc).__name__}: {exc}")
        return None
    except Exception as exc:  # noqa: BLE001 - one file's failure, whatever it is, never stops the others
        log.warning("reading %s failed", path, exc_info=True)
        _file_error(ctx, path, f"{type(exc).__name__}: {exc}")
        return None
    ctx.result.replaced_chars += loaded.replaced_chars
    return loaded


def _file_error(ctx: RunContext, path: Path, message: str) -> None:
    ctx.result.files_failed += 1
    ctx.result.errors.append({"file": str(path), "error": message})
    ctx.emit({"stage": "file_error", "file": str(path), "error": message})


def plan_files(ctx: RunContext, files: list[Path]) -> None:
    """Pass 1: load and chunk every file, keeping only ids (hash_computed); each file is read once (its
    fingerprint is hashed from the bytes loaded)."""
    seen: set[str] = set()
    for path in files:
        loaded = _load(ctx, path, seen, fingerprint=True)
        if loaded is None:
            continue
        docs = loaded.docs
        ctx.result.files_processed += 1
        ctx.result.documents += len(docs)
        plan = ctx.plans.setdefault(str(path), SourcePlan(str(path)))
        plan.title = plan.title or (docs[0].title if docs else path.stem)
        plan.fingerprint = loaded.fingerprint
        for doc in docs:
            for c in chunk_document(doc, ctx.chunk_size, ctx.overlap, ctx.markdown_sections):
                plan.add(c)
    ctx.result.chunks_total = sum(len(p.ids) for p in ctx.plans.values())
    ctx.emit({"stage": "hash_computed", "files": ctx.result.files_processed,
              "documents": ctx.result.documents, "chunks": ctx.result.chunks_total})


def existing_scan(ctx: RunContext, root: Path) -> None:
    """Decide per chunk: skip, full (embed + entities) or entities only; delete stale chunks."""
    opts, ck = ctx.options, ctx.checkpoint
    stale: dict[str, str] = {}  # chunk id -> doc id
    existing_total = 0
    ctx.stored_sources = stored_hashes(ctx.writer.store, ctx.plans)
    ctx.relocate = {source for source, plan in ctx.plans.items() if opts.refresh or plan.fingerprint is None
                    or ctx.stored_sources.get(source) != plan.fingerprint.sha256}
    for source, plan in ctx.plans.items():
        existing = {r["id"]: r for r in ctx.writer.source_chunks(source)}
        existing_total += len(existing)
        current = set(plan.ids)
        for cid, row in existing.items():
            if cid not in current:
                stale[cid] = row.get("doc_id") or ""
        for cid in plan.ids:
            found = existing.get(cid)
            stored = found is not None and bool(found.get("embedded"))
            if opts.refresh and stored:
                ctx.todo[cid] = "entities"
            elif stored and (opts.incremental or (ck is not None and ck.chunk_done(cid))):
                ctx.result.chunks_skipped += 1
            else:
                ctx.todo[cid] = "full"
        if ck is not None and ck.was_incomplete:
            ctx.touched_sources.add(source)
    if opts.incremental and root.is_dir():  # files removed from the directory
        prefix = str(root).rstrip("/") + "/"
        for source in ctx.writer.sources_under(prefix):
            if source not in ctx.plans:
                ctx.removed_sources.add(source)
                for row in ctx.writer.source_chunks(source):
                    stale[row["id"]] = row.get("doc_id") or ""
    ctx.emit({"stage": "existing_scan", "existing": existing_total, "to_process": len(ctx.todo),
              "skipped": ctx.result.chunks_skipped, "stale": len(stale)})
    if stale:
        ids = list(stale)
        for ents in ctx.writer.chunk_entities(ids).values():
            ctx.touched_entities.update(ents)
        ctx.writer.delete_chunks(ids, stale.values())
        ctx.result.chunks_deleted = len(ids)
        if ck is not None:
            ck.forget_chunks(set(ids))
        ctx.touched_sources.update(ctx.plans)  # window neighbours of removed chunks changed
    for source, plan in ctx.plans.items():
        if any(cid in ctx.todo for cid in plan.ids):
            ctx.touched_sources.add(source)


Batch = tuple[list[ChunkRec], dict[str, SourceDoc], list[ChunkRec]]


def batches(ctx: RunContext) -> Iterator[Batch]:
    """Pass 2: chunks that need work, in batches, with their documents; plus the stored chunks of
    changed files whose location (lines, pages, heading path) is rewritten without re-embedding."""
    size = ctx.options.batch_size or ctx.settings.ingest_batch_size
    seen: set[str] = set()
    batch: list[ChunkRec] = []
    docs: dict[str, SourceDoc] = {}
    moved: list[ChunkRec] = []
    for source in ctx.plans:
        if source not in ctx.relocate and not any(cid in ctx.todo for cid in ctx.plans[source].ids):
            continue
        loaded = _load(ctx, Path(source), seen)
        for doc in loaded.docs if loaded else []:
            for c in chunk_document(doc, ctx.chunk_size, ctx.overlap, ctx.markdown_sections):
                if ctx.todo.get(c.id) != "full" and source in ctx.relocate:
                    moved.append(c)
                if c.id in ctx.todo:
                    batch.append(c)
                    docs[doc.doc_id] = doc
                if len(batch) >= size or len(moved) >= size:
                    yield batch, docs, moved
                    batch, docs, moved = [], {}, []
    if batch or moved:
        yield batch, docs, moved
