"""Hybrid retrieval: vector + full-text BM25 + question entities + quota-bounded graph expansion, scored."""

from __future__ import annotations

import logging
import time
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from app.core.errors import StatementError
from app.retrieval.bm25 import lexical_index
from app.retrieval.entities import link_entities
from app.retrieval.multihop_stage import run_multihop, run_pair_stage
from app.retrieval.rerank import rerank_candidates
from app.retrieval.rerank_features import rerank_by_features
from app.retrieval.scoring import Candidate, Weights, rank, score
from app.retrieval.state import caches, index_status
from app.retrieval.text import query_terms
from app.services.container import Services
from app.services.embedding_record import check_model_cached

log = logging.getLogger(__name__)
MIN_CANDIDATES = 24


@dataclass
class RetrievalOptions:
    """Per-call knobs; defaults come from settings (see ``options_from_settings``)."""

    top_k: int = 8
    depth: int = 2
    vector: bool = True
    bm25: bool = True
    graph: bool = True
    seed_k: int = 8
    oversample: int = 4
    max_nodes: int = 120
    depth2_reserve: int = 20
    per_entity: int = 6
    max_freq: int = 60
    min_vector: float = 0.0
    rerank: bool = True
    texts: bool = True  # load chunk texts of the top_k (preview and evaluation do not need them)
    graph_mode: str = "multihop"  # "multihop" (app/retrieval/multihop_stage.py) or "bonus" (_expand)
    ablate: frozenset[str] = frozenset()  # multihop signals off: title, bridge, ppr, pair (evaluation)


@dataclass
class RetrievalResult:
    """Ranked candidates (all of them; ``top`` is the first top_k) and how they were found."""

    question: str
    candidates: list[Candidate]
    top_k: int
    degraded: bool = False
    degraded_reasons: list[str] = field(default_factory=list)
    entities: list[dict[str, Any]] = field(default_factory=list)
    empty_graph: bool = False
    timings_ms: dict[str, float] = field(default_factory=dict)

    @property
    def top(self) -> list[Candidate]:
        return self.candidates[: self.top_k]


def options_from_settings(services: Services, top_k: int | None = None, **overrides: Any) -> RetrievalOptions:
    """Options from settings, with a request's top_k and explicit overrides."""
    s = services.settings
    opts = RetrievalOptions(
        top_k=top_k or s.retrieval_top_k,
        depth=s.retrieval_max_depth if s.retrieval_graph_enabled else 0,
        bm25=s.retrieval_bm25_enabled,
        graph=s.retrieval_graph_enabled,
        seed_k=s.retrieval_seed_k,
        oversample=s.retrieval_oversample,
        max_nodes=s.retrieval_max_nodes,
        depth2_reserve=s.retrieval_depth2_reserve,
        per_entity=s.retrieval_per_entity_limit,
        max_freq=s.retrieval_entity_max_freq,
        min_vector=s.retrieval_entity_chunk_min_vector,
        graph_mode=s.retrieval_graph_mode,
    )
    for key, value in overrides.items():
        setattr(opts, key, value)
    return opts


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


class _Pool:
    """Candidates by id, with the node quota."""

    def __init__(self, max_nodes: int) -> None:
        self.by_id: dict[str, Candidate] = {}
        self.max_nodes = max_nodes

    def get_or_add(self, cid: str, budget_left: int) -> Candidate | None:
        c = self.by_id.get(cid)
        if c is None and budget_left > 0 and len(self.by_id) < self.max_nodes:
            c = self.by_id[cid] = Candidate(cid)
        return c


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
    multihop = opts.graph and opts.depth >= 1 and opts.graph_mode == "multihop"
    if opts.graph and opts.depth >= 1 and not multihop:
        t = time.perf_counter()
        entities = link_entities(store, question, opts.max_freq)
        result.timings_ms["entity_link"] = _ms(t)
    t = time.perf_counter()
    emb: list[float] = pending.result() if pending is not None else (embedding or [])
    result.timings_ms["embed_wait"] = _ms(t)
    pool = _Pool(opts.max_nodes)
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
            vector_rows = store.run("chunk_vector_search", {"embedding": emb, "k": k})
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
        _expand(services, entities, opts, weights, pool, result)
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
    if multihop:
        rerank_by_features(candidates)
    if opts.rerank and (services.settings.rerank_model or services.settings.rerank_url):
        t = time.perf_counter()
        head = rank(candidates)[: services.settings.rerank_top_n]
        _load_texts(services, head)
        rerank_candidates(services, question, head)
        score(candidates, weights)
        if multihop:
            rerank_by_features(candidates)
        result.timings_ms["rerank"] = _ms(t)
    if multihop:
        t = time.perf_counter()
        run_pair_stage(services, question, candidates, lambda head: _load_texts(services, head), opts.ablate)
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


class Offer(NamedTuple):
    """One graph path to a chunk: reason weight, hop depth and the strength of where it started."""

    weight: float
    id: str
    reason: str
    depth: int
    via: str | None = None
    rel_type: str | None = None
    conf: float | None = None
    strength: float = 1.0


def _seeds(pool: _Pool, n: int, propagate: bool) -> dict[str, float]:
    """Best direct candidates (vector + 0.4 x BM25) with their strength relative to the best one."""
    direct = [c for c in pool.by_id.values() if c.vector_rank or c.bm25_rank]
    prelim = {c.id: (c.score_raw or 0.0) + 0.4 * c.bm25 for c in direct}
    best = sorted(direct, key=lambda c: -prelim[c.id])[:n]
    top = prelim[best[0].id] if best else 1.0
    return {c.id: (prelim[c.id] / top if propagate and top > 0 else 1.0) for c in best}


def _expand(
    services: Services,
    entities: list[dict[str, Any]],
    opts: RetrievalOptions,
    weights: Weights,
    pool: _Pool,
    result: RetrievalResult,
) -> None:
    """Graph expansion in two rounds (depth 1, depth 2) under the node quotas."""
    store = services.store
    result.entities = [{"id": e["id"], "name": e["name"], "freq": e.get("freq")} for e in entities]
    entity_ids = [e["id"] for e in entities]
    names = {e["id"]: e["name"] for e in entities}
    offers: list[Offer] = []
    seeds = _seeds(pool, opts.seed_k, services.settings.retrieval_seed_strength)
    # depth 1: chunks naming question entities; neighbours of the seed chunks
    if entity_ids:
        for row in store.run("retrieval_entity_chunks", {"ids": entity_ids, "per_entity": opts.per_entity}):
            offers.append(Offer(weights.entity, str(row["id"]), "entity", 1, names.get(row["entity"])))
    offers += _neighbour_offers(store, seeds, opts, weights, depth=1)
    depth1_budget = opts.max_nodes - (opts.depth2_reserve if opts.depth >= 2 else 0) - len(pool.by_id)
    new1 = _apply(pool, offers, weights, depth1_budget)
    if opts.depth < 2:
        return
    offers = []
    if entity_ids:
        for row in store.run(
            "retrieval_cooccur_chunks",
            {"ids": entity_ids, "per_entity": opts.per_entity, "max_freq": opts.max_freq},
        ):
            offers.append(Offer(weights.cooccur, str(row["id"]), "cooccur", 2, names.get(row["entity"])))
    ranked1 = sorted((pool.by_id[i] for i in new1), key=lambda c: -c.graph_bonus)[: opts.seed_k]
    frontier = {c.id: c.path_score for c in ranked1}
    offers += _neighbour_offers(store, frontier, opts, weights, depth=2)
    _apply(pool, offers, weights, opts.max_nodes - len(pool.by_id))


def _neighbour_offers(
    store: Any, seeds: dict[str, float], opts: RetrievalOptions, weights: Weights, depth: int
) -> list[Offer]:
    """RELATES_TO / REL neighbours and chunks sharing a non-hub entity, for every seed."""
    if not seeds:
        return []
    ids = list(seeds)
    offers: list[Offer] = []
    for row in store.run("retrieval_expand_chunks", {"ids": ids, "per_seed": opts.per_entity}):
        src = str(row["src"])
        if row["kind"] == "REL":
            conf = None if row.get("conf") is None else float(row["conf"])
            weight = weights.rel_weight(row.get("rel_type"), conf)
            offers.append(
                Offer(
                    weight,
                    str(row["id"]),
                    "llm_rel",
                    depth,
                    src,
                    row.get("rel_type"),
                    conf,
                    seeds.get(src, 1.0),
                )
            )
        else:
            offers.append(
                Offer(weights.relates, str(row["id"]), "relates", depth, src, strength=seeds.get(src, 1.0))
            )
    params = {
        "ids": ids,
        "per_entity": opts.per_entity,
        "max_freq": opts.max_freq,
        "max_entities": opts.per_entity,
    }
    for row in store.run("retrieval_expand_entities", params):
        src = str(row["src"])
        offers.append(
            Offer(
                weights.relates,
                str(row["id"]),
                "relates",
                depth,
                f"{src} via {row['name']}",
                strength=seeds.get(src, 1.0),
            )
        )
    return offers


def _apply(pool: _Pool, offers: list[Offer], weights: Weights, budget: int) -> list[str]:
    """Give each offered path to its chunk (strongest first); new chunks only while ``budget`` lasts."""
    added: list[str] = []
    ranked = sorted(offers, key=lambda o: (-o.weight * o.strength * weights.path_factor(o.depth), o.id))
    for o in ranked:
        existing = o.id in pool.by_id
        c = pool.get_or_add(o.id, budget - len(added))
        if c is None:
            continue
        if not existing:
            added.append(o.id)
        c.offer_graph(
            o.reason, o.weight, o.depth, weights.path_factor(o.depth) * o.strength, o.via, o.rel_type, o.conf
        )
    return added


def _fill_details(
    services: Services, pool: _Pool, emb: list[float], only: list[str] | None = None
) -> set[str]:
    """Title, doc, vector score and degree of the candidates (all, or ``only``; no texts); returns ids found.

    With the in-process BM25 index, metadata (title, doc, degree) comes from it and the store only
    scores the vectors; chunks it does not know yet (ingested since its last build) are read in full.
    """
    found: set[str] = set()
    ids = list(pool.by_id) if only is None else [cid for cid in only if cid in pool.by_id]
    if not ids:
        return found
    meta = _index_meta(services)
    known = [cid for cid in ids if cid in meta]
    unknown = [cid for cid in ids if cid not in meta]
    if known:
        for row in services.store.run("retrieval_chunk_scores", {"ids": known, "embedding": emb}):
            c = pool.by_id[str(row["id"])]
            m = meta[c.id]
            found.add(c.id)
            c.title, c.doc_id, c.source, c.seq, c.degree = m.title, m.doc_id, m.source, m.seq, m.degree
            if row.get("score") is not None:
                c.score_raw = float(row["score"])
    if unknown:
        for row in services.store.run("retrieval_chunk_details", {"ids": unknown, "embedding": emb}):
            c = pool.by_id[str(row["id"])]
            found.add(c.id)
            c.title, c.doc_id = row.get("title"), row.get("doc_id")
            c.source, c.seq, c.degree = row.get("source"), row.get("seq"), int(row.get("degree") or 0)
            if row.get("score") is not None:
                c.score_raw = float(row["score"])
    return found


def _index_meta(services: Services) -> dict[str, Any]:
    """Chunk metadata of the in-process BM25 index ({} with the store backend or before its build)."""
    from app.retrieval.bm25 import EXTRAS_KEY

    if services.settings.retrieval_bm25_backend != "memory":
        return {}
    idx = services.extras.get(EXTRAS_KEY)
    return idx.meta if idx is not None else {}


def _load_texts(services: Services, candidates: list[Candidate]) -> None:
    """Chunk texts for the candidates that will be shown or reranked (one round trip)."""
    missing = [c for c in candidates if not c.text]
    if not missing:
        return
    texts = {
        str(r["id"]): r.get("text") or ""
        for r in services.store.run("chunk_get_by_ids", {"ids": [c.id for c in missing]})
    }
    for c in missing:
        c.text = texts.get(c.id, "")


def _ms(t: float) -> float:
    return round((time.perf_counter() - t) * 1000, 2)
