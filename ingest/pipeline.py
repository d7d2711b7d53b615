"""Ingest orchestration: scan -> hash -> existing scan -> (extract + embed || write) -> derived relations.

Public entry points: ``ingest_path`` (full / incremental / refresh, with checkpoint) and
``ingest_relations_only`` (the seed's relations-only incremental mode), both domain-level
(no FastAPI). ``progress`` receives the seed's stage dicts, e.g. ``{"stage": "scan_input", ...}``.
The stages: ingest/planning.py (pass 1, existing scan, pass 2 batches), ingest/phases.py (extract + embed
|| write, derived relations, LLM relations), over the run's state in ingest/run_context.py.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import TYPE_CHECKING

from app.core.errors import BadInput
from app.services.embedding_record import record_model
from ingest.checkpoint import Checkpoint, checkpoint_path
from ingest.embed import check_dimension
from ingest.load import scan
from ingest.options import IngestOptions, IngestResult
from ingest.phases import llm_relations, phase_a, phase_b
from ingest.planning import existing_scan, plan_files
from ingest.run_context import Progress, RunContext, llm_work, noop
from ingest.sources import record_sources
from ingest.write import GraphWriter

if TYPE_CHECKING:
    from app.core.config import Settings
    from app.services.container import Services

log = logging.getLogger(__name__)


def state_dir(settings: Settings) -> Path:
    """Fallback directory for checkpoints of read-only sources: ``<NEORAG_DATA_DIR>/ingest_state``."""
    return Path(settings.data_dir).resolve() / "ingest_state"


def graph_identity(services: Services) -> str:
    """What a checkpoint is valid for: backend + graph/database."""
    s = services.settings
    return f"{s.backend}:{s.graph_name if s.backend == 'embedded' else s.neo4j_database}"


def notify_listeners(services: Services) -> None:
    """Tell caches the corpus changed: ``extras['on_ingest']`` and each ``extras['ingest_listeners']``."""
    hooks = [services.extras.get("on_ingest")] + list(services.extras.get("ingest_listeners", []))
    for hook in hooks:
        if callable(hook):
            try:
                hook()
            except Exception:  # noqa: BLE001 - a cache hook never fails an ingest
                log.exception("ingest listener failed")


def resolve_input(path: Path | str) -> Path:
    """The absolute, symlink-resolved input path; BadInput 404 when it does not exist."""
    resolved = Path(path).expanduser().resolve()
    if not resolved.exists():
        raise BadInput(f"path: {path} does not exist", status=404, field="path")
    return resolved


def ingest_path(services: Services, path: Path, options: IngestOptions | None = None,
                progress: Progress | None = None) -> IngestResult:
    """Ingest a file or directory into the graph; returns the counts. See the module docstring."""
    started = time.perf_counter()
    options = options or IngestOptions()
    emit = progress or noop
    settings = services.settings
    root = resolve_input(path)
    overlap = settings.ingest_chunk_overlap if options.chunk_overlap is None else options.chunk_overlap
    ctx = RunContext(services, options, emit, IngestResult(incremental=options.incremental),
                     GraphWriter(services.store, settings.write_batch_size),
                     options.chunk_size or settings.ingest_chunk_size, overlap)
    ctx.markdown_sections = settings.ingest_markdown_sections if options.markdown_sections is None \
        else options.markdown_sections
    files = scan(root)
    emit({"stage": "scan_input", "detail": f"path={root}", "files": len(files)})
    plan_files(ctx, files)
    dim = check_dimension(services.store, services.embedder)
    services.store.bootstrap(dim)
    record_model(services.store, services.embedder.model_name, dim)
    emit({"stage": "schema_index", "detail": "ok", "dimension": dim})
    if options.checkpoint:
        ck_file = checkpoint_path(root, settings.checkpoint_dir(), state_dir(settings))
        ctx.checkpoint = Checkpoint.load(ck_file, graph_identity(services), str(root), fresh=options.refresh)
    before = ctx.writer.entity_count()
    existing_scan(ctx, root)
    ctx.llm = llm_work(services, options, emit)
    try:
        phase_a(ctx)
        ctx.result.entity_surface_forms, ctx.result.entity_keys = len(ctx.surfaces), len(ctx.keys)
        per_source = phase_b(ctx)
        llm_relations(ctx)
        record_sources(ctx.writer, ctx.plans, per_source, ctx.relocate, ctx.stored_sources,
                       ctx.removed_sources)
    finally:
        if ctx.llm is not None:
            ctx.llm.close()
            ctx.result.llm_cache_hits = ctx.llm.counts.cache_hits
            ctx.result.llm_entity_errors += ctx.llm.counts.entity_errors
            ctx.result.llm_entity_rel_errors = ctx.llm.counts.relation_errors
    ctx.result.entities_created = max(0, ctx.writer.entity_count() - before)
    ctx.result.relations_created = (ctx.result.cooccur_edges + ctx.result.relates_to_edges
                                    + ctx.result.llm_rel_edges)
    if ctx.checkpoint is not None:
        ctx.checkpoint.finish()
    ctx.result.elapsed_sec = time.perf_counter() - started
    notify_listeners(services)
    return ctx.result
