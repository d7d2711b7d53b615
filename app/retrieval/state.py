"""Per-process retrieval state in ``services.extras``: caches, ingest listener, diagnostics section."""

from __future__ import annotations

from typing import Any

from app.retrieval.cache import RetrievalCaches, caches_for
from app.retrieval.scoring import Weights
from app.retrieval.vectors import vector_index_stats
from app.services.container import Services


def caches(services: Services) -> RetrievalCaches:
    """The query-embedding and answer caches (created lazily; registers diagnostics too)."""
    s = services.settings
    register_diagnostics(services)
    return caches_for(services.extras, s.cache_embedding_size, s.cache_answer_size, s.cache_ttl_s)


def register_diagnostics(services: Services) -> None:
    """Add the ``retrieval`` section to /diagnostics (idempotent; start-up hook and first use)."""
    diag = services.extras.setdefault("diagnostics", {})
    if "retrieval" not in diag:
        diag["retrieval"] = lambda: retrieval_diagnostics(services)


def retrieval_diagnostics(services: Services) -> dict[str, Any]:
    """Weights, fusion, quotas and cache sizes for /diagnostics."""
    s = services.settings
    c = caches(services)
    return {
        "weights": Weights.from_settings(s).as_dict(),
        "fusion": s.retrieval_fusion,
        "graph_mode": s.retrieval_graph_mode,
        "lexical_backend": s.retrieval_bm25_backend,
        "bm25_index": _bm25_stats(services),
        "vector_backend": s.retrieval_vector_backend,
        "vector_index": vector_index_stats(services),
        "entity_graph": _entity_graph_stats(services),
        "quotas": {
            "max_nodes": s.retrieval_max_nodes,
            "max_depth": s.retrieval_max_depth,
            "depth2_reserve": s.retrieval_depth2_reserve,
            "per_entity": s.retrieval_per_entity_limit,
            "entity_max_freq": s.retrieval_entity_max_freq,
            "seed_k": s.retrieval_seed_k,
        },
        "top_k": s.retrieval_top_k,
        "passages_top_k": s.passages_top_k,
        "feature_flags": {
            "bm25_enabled": s.retrieval_bm25_enabled,
            "graph_enabled": s.retrieval_graph_enabled,
            "degree_enabled": s.retrieval_degree_enabled,
            "rerank_enabled": bool(s.rerank_model or s.rerank_url),
        },
        "caches": {
            "embedding_cache_size": len(c.embeddings),
            "answer_cache_size": len(c.answers),
            "ttl_s": s.cache_ttl_s,
        },
        "query_embedder": services.embedder.query_stats(),
    }


def _bm25_stats(services: Services) -> dict[str, Any] | None:
    from app.retrieval.bm25 import EXTRAS_KEY

    idx = services.extras.get(EXTRAS_KEY)
    return idx.stats() if idx is not None else None


def _entity_graph_stats(services: Services) -> dict[str, Any] | None:
    """The entity graph's sizes and, once built, the corpus figures the ``auto`` graph mode decides by."""
    from app.retrieval.graph_index import EXTRAS_KEY
    from app.retrieval.multihop import auto_graph_mode

    idx = services.extras.get(EXTRAS_KEY)
    if idx is None:
        return None
    stats: dict[str, Any] = idx.stats()
    graph = idx.index
    if graph is not None:
        stats["title_links"] = round(graph.title_links, 4)
        stats["chunks_per_title"] = round(graph.chunks_per_title, 2)
        stats["auto_graph_mode"] = auto_graph_mode(graph)
    return stats


def index_status(services: Services, max_age_s: float = 10.0) -> dict[str, bool]:
    """Whether the chunk vector and full-text indexes exist (re-checked at most every ``max_age_s``); the
    vector one always does when vectors are searched in process."""
    import time

    from app.store.schema import list_indexes

    cached = services.extras.get("retrieval_index_status")
    now = time.monotonic()
    if cached is not None and now - cached[0] < max_age_s:
        return cached[1]  # type: ignore[no-any-return]
    indexes = list_indexes(services.store)
    status = {
        "vector": services.settings.retrieval_vector_backend == "memory"
        or any(i.type == "VECTOR" and i.label == "Chunk" for i in indexes),
        "fulltext": any(i.type in ("FULLTEXT", "FULL-TEXT") and i.label == "Chunk" for i in indexes),
    }
    services.extras["retrieval_index_status"] = (now, status)
    return status
