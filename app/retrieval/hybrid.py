"""Hybrid retrieval: vector + full-text BM25 + question entities + quota-bounded graph expansion, scored."""

from __future__ import annotations

import logging
import time
from concurrent.futures import Future
from typing import Any

from app.core.errors import StatementError
from app.documents.locations import located
from app.retrieval.bm25 import lexical_index
from app.retrieval.entities import link_entities
from app.retrieval.expand import Pool, expand
from app.retrieval.multihop_stage import resolve_graph_mode, run_multihop, run_pair_stage
from app.retrieval.options import RetrievalOptions, RetrievalResult, options_from_settings
from app.retrieval.rerank import rerank_candidates
from app.retrieval.rerank_features import rerank_by_features
from app.retrieval.scoring import Candidate, Weights, rank, score
from app.retrieval.state import caches, index_status
from app.retrieval.text import query_terms
from app.retrieval.vectors import served_vectors, vector_search
from app.services.container import Services
from app.services.embedding_record import check_model_cached

log = logging.getLogger(__name__)
MIN_CANDIDATES = 24


def lexical_search(services: Services, question: str, k: int) -> list[tuple[str, float]]:
    """BM25 hits (chunk id, score max-normalised to (0, 1]) from the configured backend."""
    terms = query_terms(question)
    if not terms:
        return []
    if services.settings.retrieval_bm25_backend == "memory":
        return lexical_index(services.extras, services.store).search(terms, k)
    rows = services.store.run("chunk_fulltext_search", {"terms": terms, "k": k})
    return [(str(r["id"]), float(r["score"] or 0.0)) for r in rows]


def query_embedding(services: Services, text: str) -> list[float]:
    """The question's embedding through the query-embedding cache (LRU + TTL)."""
    return query_embedding_future(services, text).result()


def query_embedding_future(services: Services, text: str) -> Future[list[float]]:
    """The question's embedding, computed by the embedder's query batcher (shared with concurrent
    requests) unless the query-embedding cache has it; the caller may work while it is computed."""
    cache = caches(services).embeddings
    key = f"question:{text}"
    vec = cache.get(key)
    if vec is not None:
        done: Future[list[float]] = Future()
        done.set_result(vec)
        return done
    s = services.settings
    fut = services.embedder.queries(
        s.embedding_query_threads, s.embedding_query_window_ms, s.embedding_query_warm_words,
        s.embedding_query_precision,
    ).submit(text)
    fut.add_done_callback(lambda f: cache.put(key, f.result()) if f.exception() is None else None)
    return fut


def retrieve(
    services: Services,
    question: str,
    options: RetrievalOptions | None = None,
    embedding: list[float] | None = None,
) -> RetrievalResult:
    """Retrieve and score chunks for ``question``. Raises StoreUnavailable when the store is down."""
    opts = options or options_from_settings(services)
    weights = Weights.from_settings(services.settings)
    store = services.store
    check_model_cached(services.extras, store, services.embedder.model_name, services.embedder.dimension)
    result = RetrievalResult(question, [], opts.top_k)
    t0 = time.perf_counter()
    # the question's embedding is computed while BM25 and entity linking (no vector needed) run
    pending = None if embedding is not None else query_embedding_future(services, question)
    k = max(MIN_CANDIDATES, opts.top_k * opts.oversample)
    hits: list[tuple[str, float]] = []
    bm25_error: str | None = None
    if opts.bm25 and (
        services.settings.retrieval_bm25_backend == "memory" or index_status(services)["fulltext"]
    ):
        t = time.perf_counter()
        try:
            hits = lexical_search(services, question, k)
        except StatementError as exc:
            bm25_error = f"full-text search failed, BM25 skipped: {exc}"
        result.timings_ms["bm25"] = _ms(t)
    entities: list[dict[str, Any]] = []
    if opts.graph and opts.depth >= 1:
        result.graph_mode = resolve_graph_mode(services, opts.graph_mode)
    multihop = result.graph_mode == "multihop"
    if opts.graph and opts.depth >= 1 and not multihop:
        t = time.perf_counter()
        entities = link_entities(store, question, opts.max_freq)
        result.timings_ms["entity_link"] = _ms(t)
    t = time.perf_counter()
    emb: list[float] = pending.result() if pending is not None else (embedding or [])
    result.timings_ms["embed_wait"] = _ms(t)
    pool = Pool(opts.max_nodes)
    direct_cap = opts.max_nodes - (opts.depth2_reserve if opts.graph and opts.depth >= 2 else 0)

    indexes = index_status(services)
    if opts.vector and not indexes["vector"]:
        result.degraded = True
        result.degraded_reasons.append("vector index missing: lexical and graph candidates only")
    if opts.bm25 and not indexes["fulltext"] and services.settings.retrieval_bm25_backend == "store":
        result.degraded = True
        result.degraded_reasons.append("full-text index missing: BM25 skipped, vector and graph only")
    vector_rows: list[dict[str, Any]] = []
    if opts.vector and indexes["vector"]:
        t = time.perf_counter()
        try:
            vector_rows = vector_search(services, emb, k)
        except StatementError as exc:
            result.degraded = True
            result.degraded_reasons.append(f"vector index unavailable, lexical/graph fallback used: {exc}")
        result.timings_ms["vector"] = _ms(t)
    for i, row in enumerate(vector_rows[:direct_cap], 1):
        c = pool.get_or_add(str(row["id"]), direct_cap - len(pool.by_id))
        if c is not None:
            c.add_reason("vector")
            c.vector_rank, c.score_raw = i, float(row["score"])

    if bm25_error:
        result.degraded = True
        result.degraded_reasons.append(bm25_error)
    for i, (cid, value) in enumerate(hits, 1):
        c = pool.get_or_add(cid, direct_cap - len(pool.by_id))
        if c is not None:
            c.add_reason("bm25")
            c.bm25_rank, c.bm25 = i, value

    if opts.graph and opts.depth >= 1 and not multihop:
        t = time.perf_counter()
        expand(services, entities, opts, weights, pool, result)
        result.timings_ms["graph"] = _ms(t)

    t = time.perf_counter()
    if multihop:
        found = run_multihop(services, question, pool, lambda ids: _fill_details(services, pool, emb, ids),
                             result, opts.ablate)
    else:
        found = _fill_details(services, pool, emb)
        result.timings_ms["details"] = _ms(t)
    candidates = [c for c in pool.by_id.values() if c.id in found]
    if opts.min_vector > 0 and not multihop:
        candidates = [
            c for c in candidates if c.vector_rank or c.bm25_rank or (c.score_raw or 0.0) >= opts.min_vector
        ]
    score(candidates, weights)
    trees = services.settings.retrieval_reranker == "trees" and "trees" not in opts.ablate
    if multihop:
        result.reranker = "trees" if trees else "linear"
        rerank_by_features(candidates, result.untitled, trees, services.embedder.model_name)
    if opts.rerank and (services.settings.rerank_model or services.settings.rerank_url):
        t = time.perf_counter()
        head = rank(candidates)[: services.settings.rerank_top_n]
        _load_texts(services, head)
        rerank_candidates(services, question, head)
        score(candidates, weights)
        if multihop:
            rerank_by_features(candidates, result.untitled, trees, services.embedder.model_name)
        result.timings_ms["rerank"] = _ms(t)
    if multihop:
        t = time.perf_counter()
        run_pair_stage(services, question, candidates, lambda head: _load_texts(services, head), opts.ablate,
                       result.untitled)
        result.timings_ms["pair"] = _ms(t)
    result.candidates = rank(candidates)
    if opts.texts:
        t = time.perf_counter()
        _load_texts(services, result.top)
        result.timings_ms["texts"] = _ms(t)
    if not result.candidates and not result.degraded:
        result.empty_graph = not store.run("retrieval_chunk_count")[0]["chunks"]
    result.timings_ms["total"] = _ms(t0)
    return result


def _fill_details(
    services: Services, pool: Pool, emb: list[float], only: list[str] | None = None
) -> set[str]:
    """Title, doc, vector score and degree of the candidates (all, or ``only``; no texts); returns ids found.

    With the in-process BM25 index, metadata (title, doc, degree) comes from it; the in-process vector
    index scores the vectors it holds, and the store the others; chunks the BM25 index does not know yet
    (ingested since its last build) are read in full.
    """
    found: set[str] = set()
    ids = list(pool.by_id) if only is None else [cid for cid in only if cid in pool.by_id]
    if not ids:
        return found
    meta = _index_meta(services)
    known = [cid for cid in ids if cid in meta]
    unknown = [cid for cid in ids if cid not in meta]
    vectors = served_vectors(services)  # scores what it holds while fresh; the store scores the rest
    scores: dict[str, float | None] = dict(vectors.scores(known, emb)) if vectors and known else {}
    remote = [cid for cid in known if cid not in scores]
    if remote:
        for row in services.store.run("retrieval_chunk_scores", {"ids": remote, "embedding": emb}):
            scores[str(row["id"])] = row.get("score")
    for cid, value in scores.items():
        c, m = pool.by_id[cid], meta[cid]
        found.add(cid)
        c.title, c.doc_id, c.source, c.seq, c.degree = m.title, m.doc_id, m.source, m.seq, m.degree
        if value is not None:
            c.score_raw = float(value)
    if unknown:
        for row in services.store.run("retrieval_chunk_details", {"ids": unknown, "embedding": emb}):
            c = pool.by_id[str(row["id"])]
            found.add(c.id)
            c.title, c.doc_id = row.get("title"), row.get("doc_id")
            c.source, c.seq, c.degree = row.get("source"), row.get("seq"), int(row.get("degree") or 0)
            if row.get("score") is not None:
                c.score_raw = float(row["score"])
    return found


def _index_meta(services: Services, fresh_only: bool = False) -> dict[str, Any]:
    """Chunk metadata of the in-process BM25 index ({} with the store backend, before its build, or with
    ``fresh_only`` while an ingest or delete is not in it yet)."""
    from app.retrieval.bm25 import EXTRAS_KEY

    if services.settings.retrieval_bm25_backend != "memory":
        return {}
    idx = services.extras.get(EXTRAS_KEY)
    return idx.meta if idx is not None and (idx.fresh or not fresh_only) else {}


def _load_texts(services: Services, candidates: list[Candidate]) -> None:
    """Chunk texts, locations and sections for the candidates that will be shown or reranked: from the
    in-process BM25 index while it is fresh (no ingest or delete since its build), the rest in one round
    trip."""
    missing = [c for c in candidates if not c.text]
    meta = _index_meta(services, fresh_only=True)
    for c in missing:
        m = meta.get(c.id)
        if m is not None:
            c.text, c.located = m.text, m.located
    missing = [c for c in missing if not c.text]
    if not missing:
        return
    rows = {str(r["id"]): r for r in services.store.run("chunk_get_by_ids", {"ids": [c.id for c in missing]})}
    for c in missing:
        row = rows.get(c.id)
        c.text = (row.get("text") or "") if row else ""
        if row:
            c.located = located(row)


def _ms(t: float) -> float:
    return round((time.perf_counter() - t) * 1000, 2)
