"""Ingest orchestration: scan -> hash -> existing scan -> (extract + embed || write) -> derived relations.

Public entry points: ``ingest_path`` (full / incremental / refresh, with checkpoint) and
``ingest_relations_only`` (the seed's relations-only incremental mode), both domain-level
(no FastAPI). ``progress`` receives the seed's stage dicts, e.g. ``{"stage": "scan_input", ...}``.
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.core.errors import BadInput
from app.services.embedding_record import record_model
from ingest.checkpoint import Checkpoint, checkpoint_path
from ingest.chunk import ChunkRec, chunk_document
from ingest.embed import check_dimension, embed_texts
from ingest.entities import Mention, extract_heuristic
from ingest.llm_extract import ChunkExtraction, LLMIngest
from ingest.llm_relations import window_pairs
from ingest.load import LoadError, SourceDoc, load_file, scan
from ingest.options import IngestOptions, IngestResult
from ingest.paths import outside_roots
from ingest.redirects import apply_redirects, redirect_relations, redirect_targets
from ingest.relations import relates_rows
from ingest.sources import Fingerprint, fingerprint, record_sources, stored_hashes
from ingest.write import GraphWriter
from ingest.writer_thread import BackgroundWriter

if TYPE_CHECKING:
    from app.core.config import Settings
    from app.services.container import Services

log = logging.getLogger(__name__)
Progress = Callable[[dict[str, Any]], None]


def _noop(_: dict[str, Any]) -> None:
    return None


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


@dataclass
class RunContext:
    """Per-run state shared by the stages."""

    services: Services
    options: IngestOptions
    emit: Progress
    result: IngestResult
    writer: GraphWriter
    chunk_size: int
    overlap: int
    checkpoint: Checkpoint | None = None
    plans: dict[str, SourcePlan] = field(default_factory=dict)
    todo: dict[str, str] = field(default_factory=dict)  # chunk id -> "full" | "entities"
    touched_entities: set[str] = field(default_factory=set)
    touched_sources: set[str] = field(default_factory=set)
    processed: set[str] = field(default_factory=set)
    surfaces: set[str] = field(default_factory=set)
    keys: set[str] = field(default_factory=set)
    llm: LLMIngest | None = None  # the run's LLM work (ingest/llm_extract.py) when an LLM is used
    markdown_sections: bool = True
    stored_sources: dict[str, str | None] = field(default_factory=dict)  # path -> hash on its Source
    relocate: set[str] = field(default_factory=set)  # files whose stored chunks get their location rewritten
    removed_sources: set[str] = field(default_factory=set)  # files gone from an incremental directory ingest

    @property
    def settings(self) -> Settings:
        return self.services.settings


def state_dir(settings: Settings) -> Path:
    """Fallback directory for checkpoints of read-only sources: ``<NEORAG_DATA_DIR>/ingest_state``."""
    return Path(settings.data_dir).resolve() / "ingest_state"


def graph_identity(services: Services) -> str:
    """What a checkpoint is valid for: backend + graph/database."""
    s = services.settings
    return f"{s.backend}:{s.graph_name if s.backend == 'embedded' else s.neo4j_database}"


def llm_relations_enabled(services: Services, options: IngestOptions) -> bool:
    """Whether LLM REL extraction runs: the option, else the setting (auto = LLM configured)."""
    if options.llm_relations is not None:
        return bool(options.llm_relations) and services.llm is not None
    mode = services.settings.ingest_llm_relations
    return services.llm is not None and mode in ("auto", "on")


def llm_work(services: Services, options: IngestOptions, emit: Progress) -> LLMIngest | None:
    """The run's LLM work when it uses an LLM (entities in llm mode, or LLM relations), else None."""
    mode = options.entity_mode or services.settings.ingest_entity_mode
    relations = llm_relations_enabled(services, options)
    if services.llm is None or not (mode == "llm" or relations):
        return None
    return LLMIngest(services, services.llm, mode, relations, emit)


def _load(ctx: RunContext, path: Path, seen: set[str]) -> list[SourceDoc] | None:
    refused = outside_roots(path, ctx.options.allowed_roots)
    if refused is not None:
        _file_error(ctx, path, refused)
        return None
    try:
        loaded = load_file(path, seen, ctx.services.settings.ingest_max_file_chars)
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
    return loaded.docs


def _file_error(ctx: RunContext, path: Path, message: str) -> None:
    ctx.result.files_failed += 1
    ctx.result.errors.append({"file": str(path), "error": message})
    ctx.emit({"stage": "file_error", "file": str(path), "error": message})


def _plan(ctx: RunContext, files: list[Path]) -> None:
    """Pass 1: load and chunk every file, keeping only ids (hash_computed)."""
    seen: set[str] = set()
    for path in files:
        docs = _load(ctx, path, seen)
        if docs is None:
            continue
        ctx.result.files_processed += 1
        ctx.result.documents += len(docs)
        plan = ctx.plans.setdefault(str(path), SourcePlan(str(path)))
        plan.title = plan.title or (docs[0].title if docs else path.stem)
        try:
            plan.fingerprint = fingerprint(path)
        except OSError:
            plan.fingerprint = None
        for doc in docs:
            for c in chunk_document(doc, ctx.chunk_size, ctx.overlap, ctx.markdown_sections):
                plan.add(c)
    ctx.result.chunks_total = sum(len(p.ids) for p in ctx.plans.values())
    ctx.emit({"stage": "hash_computed", "files": ctx.result.files_processed,
              "documents": ctx.result.documents, "chunks": ctx.result.chunks_total})


def _existing_scan(ctx: RunContext, root: Path) -> None:
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


def _batches(ctx: RunContext) -> Iterator[Batch]:
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
        for doc in loaded or []:
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


def _extract(ctx: RunContext, chunks: list[ChunkRec]) -> dict[str, ChunkExtraction]:
    s = ctx.settings
    if ctx.llm is not None and ctx.llm.per_chunk:  # LLM entities and/or entity relations
        out = ctx.llm.extract(chunks, len(ctx.todo))
    else:
        out = {c.id: ChunkExtraction(extract_heuristic(c.text, s.ingest_entity_min_len,
                                                       s.ingest_entity_max_per_chunk)) for c in chunks}
    for res in out.values():
        for m in res.mentions:
            ctx.keys.add(m.key)
            ctx.surfaces.update(m.surfaces)
    return out


def _write_batch(ctx: RunContext, chunks: list[ChunkRec], docs: dict[str, SourceDoc],
                 extracted: dict[str, ChunkExtraction], vectors: dict[str, list[float]],
                 moved: list[ChunkRec]) -> None:
    """Runs on the writer thread: documents, chunks, NEXT, entities, then embeddings (the 'done' marker)."""
    mentions: dict[str, list[Mention]] = {cid: res.mentions for cid, res in extracted.items()}
    w = ctx.writer
    if moved:
        w.locations(moved, {c.id: ctx.plans[c.source].pos[c.id] for c in moved})
    full = [c for c in chunks if ctx.todo.get(c.id) == "full"]
    refresh = [c.id for c in chunks if ctx.todo.get(c.id) == "entities"]
    if full:
        w.documents(list({c.doc_id: docs[c.doc_id] for c in full}.values()))
        positions = {c.id: ctx.plans[c.source].pos[c.id] for c in full}
        w.chunks(full, positions)
        w.next_links(_next_pairs(ctx, full))
    if refresh:
        for ents in w.chunk_entities(refresh).values():
            ctx.touched_entities.update(ents)
        w.clear_mentions(refresh)
    relations = [r for res in extracted.values() for r in res.relations]
    merged = redirect_targets(w.store, [m.key for ms in mentions.values() for m in ms]
                              + [k for r in relations for k in (r.source, r.target)])
    ctx.touched_entities.update(w.entities(apply_redirects(w.store, mentions, merged)))
    w.entity_types({k: t for res in extracted.values() for k, t in res.types.items() if k not in merged})
    ctx.result.llm_entity_rel_edges += w.entity_rels(redirect_relations(merged, relations))
    if vectors:
        ids = list(vectors)
        w.embeddings(ids, [vectors[i] for i in ids])
    if ctx.checkpoint is not None:
        ctx.checkpoint.mark_chunks([c.id for c in chunks])


def _next_pairs(ctx: RunContext, chunks: list[ChunkRec]) -> list[tuple[str, str]]:
    pairs = set()
    for c in chunks:
        siblings = ctx.plans[c.source].doc_chunks[c.doc_id]
        idx = c.seq
        if idx > 0:
            pairs.add((siblings[idx - 1], c.id))
        if idx + 1 < len(siblings):
            pairs.add((c.id, siblings[idx + 1]))
    return sorted(pairs)


def _phase_a(ctx: RunContext) -> None:
    """Extract + embed on this thread while the writer thread writes the previous batch."""
    total = len(ctx.todo)
    n_embed = sum(1 for v in ctx.todo.values() if v == "full")
    n_batches = max(1, -(-total // (ctx.options.batch_size or ctx.settings.ingest_batch_size)))
    writer = BackgroundWriter(depth=2)
    done = embedded = batch_no = 0
    try:
        for chunks, docs, moved in _batches(ctx):
            batch_no += 1
            extracted = _extract(ctx, chunks)
            to_embed = [c for c in chunks if ctx.todo[c.id] == "full"]
            vectors: dict[str, list[float]] = {}
            if to_embed:
                vecs = embed_texts(ctx.services.embedder, [c.embed_text for c in to_embed],
                                   ctx.settings.ingest_embed_batch_size)
                vectors = {c.id: v for c, v in zip(to_embed, vecs, strict=True)}
                embedded += len(to_embed)
                ctx.emit({"stage": "embedding_batch", "detail": "batch_ok", "current": batch_no,
                          "total": n_batches})
                ctx.emit({"stage": "embedding_progress", "current": embedded, "total": n_embed})
            done += len(chunks)
            ctx.emit({"stage": "entity_extraction", "current": done, "total": total,
                      "entities": len(ctx.keys)})
            writer.submit(functools.partial(_write_batch, ctx, chunks, docs, extracted, vectors, moved))
            ctx.processed.update(c.id for c in chunks)
    finally:
        writer.close()
    ctx.result.chunks_new = embedded
    if ctx.checkpoint is not None:
        ctx.checkpoint.save(force=True)


def _phase_b(ctx: RunContext) -> dict[str, dict[str, list[str]]]:
    """Entity freq/orphans, CO_OCCURS, RELATES_TO for touched data; returns entity sets per source."""
    s = ctx.settings
    window = ctx.options.rel_window or s.relation_window
    per_source: dict[str, dict[str, list[str]]] = {}
    rebuild_all = ctx.checkpoint is not None and ctx.checkpoint.was_incomplete
    for source in sorted(ctx.touched_sources):
        ents = ctx.writer.chunk_entities(ctx.plans[source].ids)
        per_source[source] = ents
        if rebuild_all:
            for keys in ents.values():
                ctx.touched_entities.update(keys)
    ctx.writer.refresh_entities(sorted(ctx.touched_entities))
    edges = (ctx.writer.rebuild_cooccurs(s.ingest_cooccur_top_k, s.ingest_cooccur_min_count)
             if ctx.touched_entities else 0)
    ctx.result.cooccur_edges = edges
    ctx.emit({"stage": "cooccurrence", "entities": len(ctx.touched_entities), "edges": edges})
    relates = 0
    for source, ents in per_source.items():
        ids = ctx.plans[source].ids
        ctx.writer.clear_relates(ids)
        rows = relates_rows(ids, ents, window)
        ctx.writer.relates(rows)
        relates += len(rows)
    ctx.result.relates_to_edges = relates
    ctx.emit({"stage": "relates_to", "sources": len(per_source), "edges": relates, "window": window})
    return per_source


def _llm_relations(ctx: RunContext) -> None:
    """LLM REL edges for window pairs of touched sources that involve a processed chunk."""
    s, opts, ck = ctx.settings, ctx.options, ctx.checkpoint
    window = opts.rel_window or s.relation_window
    llm = ctx.services.llm
    if not llm_relations_enabled(ctx.services, opts) or llm is None:
        ctx.emit({"stage": "relation_start", "pairs": 0, "window": window, "detail": "skipped: no LLM"})
        ctx.emit({"stage": "relation_extraction_done", "created": 0, "errors": 0, "pairs": 0})
        return
    redo = opts.refresh and opts.refresh_relations
    work: list[tuple[str, str, str, str]] = []
    for source in sorted(ctx.touched_sources):
        rows = ctx.writer.source_chunks_ordered(source)
        ids = [r["id"] for r in rows]
        text = {r["id"]: r["text"] or "" for r in rows}
        if redo:
            ctx.writer.clear_rel(ids)
        for a, b in window_pairs(ids, window):
            resumed = ck is not None and ck.was_incomplete
            if not (redo or resumed or a in ctx.processed or b in ctx.processed):
                continue
            if ck is not None and not redo and ck.pair_done(a, b):
                continue
            work.append((a, text[a], b, text[b]))
    if ck is not None and redo:
        ck.reset_pairs()
    ctx.emit({"stage": "relation_start", "pairs": len(work), "window": window})
    created = errors = 0
    truncate = opts.rel_truncate or s.ingest_rel_truncate
    assert ctx.llm is not None  # set up whenever LLM relations are enabled
    for n, (a, b, outcome) in enumerate(ctx.llm.label_pairs(work, truncate, opts.rel_temperature), 1):
        if outcome.error:
            errors += 1
            ctx.emit({"stage": "relation_warn", "pair": f"{a}::{b}", "error": outcome.error})
        else:
            ctx.writer.rels(outcome.relations)
            created += len(outcome.relations)
        if ck is not None:
            ck.mark_pair(a, b, len(outcome.relations), outcome.error)
        if n % 10 == 0 or n == len(work):
            ctx.emit({"stage": "relation_extraction", "current": n, "total": len(work), "created": created})
    ctx.result.llm_rel_edges = created
    ctx.result.llm_rel_errors = errors
    ctx.emit({"stage": "relation_extraction_done", "created": created, "errors": errors, "pairs": len(work)})


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
    emit = progress or _noop
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
    _plan(ctx, files)
    dim = check_dimension(services.store, services.embedder)
    services.store.bootstrap(dim)
    record_model(services.store, services.embedder.model_name, dim)
    emit({"stage": "schema_index", "detail": "ok", "dimension": dim})
    if options.checkpoint:
        ck_file = checkpoint_path(root, settings.checkpoint_dir(), state_dir(settings))
        ctx.checkpoint = Checkpoint.load(ck_file, graph_identity(services), str(root), fresh=options.refresh)
    before = ctx.writer.entity_count()
    _existing_scan(ctx, root)
    ctx.llm = llm_work(services, options, emit)
    try:
        _phase_a(ctx)
        ctx.result.entity_surface_forms, ctx.result.entity_keys = len(ctx.surfaces), len(ctx.keys)
        per_source = _phase_b(ctx)
        _llm_relations(ctx)
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
