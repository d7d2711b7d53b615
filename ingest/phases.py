"""The work of an ingest run: extract + embed while a writer thread writes (phase A), the derived
entity statistics, CO_OCCURS and RELATES_TO edges (phase B), then the LLM's REL edges."""

from __future__ import annotations

import functools

from ingest.chunk import ChunkRec
from ingest.embed import embed_texts
from ingest.entities import Mention, extract_heuristic
from ingest.llm_extract import ChunkExtraction
from ingest.llm_relations import window_pairs
from ingest.load import SourceDoc
from ingest.planning import batches
from ingest.redirects import apply_redirects, redirect_relations, redirect_targets
from ingest.relations import relates_rows
from ingest.run_context import RunContext, llm_relations_enabled
from ingest.writer_thread import BackgroundWriter


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


def phase_a(ctx: RunContext) -> None:
    """Extract + embed on this thread while the writer thread writes the previous batch."""
    total = len(ctx.todo)
    n_embed = sum(1 for v in ctx.todo.values() if v == "full")
    n_batches = max(1, -(-total // (ctx.options.batch_size or ctx.settings.ingest_batch_size)))
    writer = BackgroundWriter(depth=2)
    done = embedded = batch_no = 0
    try:
        for chunks, docs, moved in batches(ctx):
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


def phase_b(ctx: RunContext) -> dict[str, dict[str, list[str]]]:
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


def llm_relations(ctx: RunContext) -> None:
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
