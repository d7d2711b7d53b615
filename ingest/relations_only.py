"""Relations-only incremental mode (semantic patch): LLM REL edges for newly appended chunks.

Pairs considered: new-new and tail-old to early-new inside the window (source order). Existing
``(src, dst, type)`` REL edges are skipped, nothing is deleted, re-running is idempotent.
Stages: relation_incremental_start / _progress / _warn / _done; result ``mode = relations_incremental``.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

from app.core.errors import BadInput
from app.services.llm import require_llm
from ingest.llm_extract import LLMIngest
from ingest.llm_relations import PairOutcome, window_pairs
from ingest.options import IngestOptions, RelationsOnlyResult
from ingest.pipeline import notify_listeners, resolve_input
from ingest.run_context import Progress, noop
from ingest.write import GraphWriter

if TYPE_CHECKING:
    from app.services.container import Services


def validate_relations_only(options: IngestOptions) -> None:
    """BadInput (422) unless a boundary is given: ``new_after`` or ``detect_after`` + ``new_count``."""
    if options.new_after:
        return
    if options.detect_after and options.new_count:
        return
    if options.detect_after:
        raise BadInput("new_count: required with detect_after=true (how many chunks were appended)",
                       field="new_count")
    raise BadInput("new_after: inc_rel_only needs new_after=<last old chunk id> "
                   "or detect_after=true&new_count=N", field="new_after")


def _boundary(ids: list[str], options: IngestOptions) -> int:
    if options.new_after:
        if options.new_after not in ids:
            raise BadInput(f"new_after: chunk {options.new_after!r} is not a chunk of this source",
                           field="new_after")
        return ids.index(options.new_after) + 1
    count = int(options.new_count or 0)
    if count > len(ids):
        raise BadInput(f"new_count: {count} exceeds the {len(ids)} chunks stored for this source",
                       field="new_count")
    return len(ids) - count


def _apply(writer: GraphWriter, res: RelationsOnlyResult, existing: set[tuple[str, str, str]], a: str, b: str,
           outcome: PairOutcome, emit: Progress) -> None:
    """Write a pair's new REL edges (existing ones are skipped) or count its error."""
    if outcome.error:
        res.errors += 1
        res.skipped += 1
        emit({"stage": "relation_incremental_warn", "pair": f"{a}::{b}", "error": outcome.error})
        return
    fresh = [r for r in outcome.relations if (r.src, r.dst, r.type) not in existing]
    res.skipped += len(outcome.relations) - len(fresh)
    if fresh:
        writer.rels(fresh)
        existing.update((r.src, r.dst, r.type) for r in fresh)
        res.created += len(fresh)


def ingest_relations_only(services: Services, path: Path, options: IngestOptions,
                          progress: Progress | None = None) -> RelationsOnlyResult:
    """Add LLM REL edges for the new chunks of one source file (``path`` must equal ``Chunk.source``)."""
    started = time.perf_counter()
    emit = progress or noop
    validate_relations_only(options)
    llm = require_llm(services.llm)
    source = str(resolve_input(path))
    writer = GraphWriter(services.store, services.settings.write_batch_size)
    rows = writer.source_chunks_ordered(source)
    if not rows:
        raise BadInput(f"path: no chunks are stored for {source}; ingest it first", status=404, field="path")
    ids = [r["id"] for r in rows]
    text = {r["id"]: r["text"] or "" for r in rows}
    boundary = _boundary(ids, options)
    window = options.rel_window or services.settings.relation_window
    truncate = options.rel_truncate or services.settings.ingest_rel_truncate
    pairs = window_pairs(ids, window, boundary)
    res = RelationsOnlyResult(pairs=len(pairs), old=boundary, new=len(ids) - boundary)
    emit({"stage": "relation_incremental_start", "old": res.old, "new": res.new, "window": window,
          "pairs": len(pairs)})
    existing = writer.existing_rels(pairs)
    work = LLMIngest(services, llm, "heuristic", False, emit)  # cached, llm_parallel pairs at a time
    try:
        labelled = work.label_pairs([(a, text[a], b, text[b]) for a, b in pairs], truncate,
                                    options.rel_temperature)
        for n, (a, b, outcome) in enumerate(labelled, 1):
            _apply(writer, res, existing, a, b, outcome, emit)
            if n % 10 == 0 or n == len(pairs):
                emit({"stage": "relation_incremental_progress", "processed": n, "total": len(pairs),
                      "created": res.created, "skipped": res.skipped})
    finally:
        work.close()
    emit({"stage": "relation_incremental_done", "created": res.created, "skipped": res.skipped,
          "pairs": res.pairs, "old": res.old, "new": res.new})
    res.elapsed_sec = time.perf_counter() - started
    if res.created:
        notify_listeners(services)
    return res
