"""CoRAG passage retrieval (POST /retrieve with an object body), on the hybrid retriever."""

from __future__ import annotations

from typing import Any

from app.documents.locations import add_locations
from app.retrieval.hybrid import retrieve
from app.retrieval.options import options_from_settings
from app.services.container import Services


def retrieve_passages(services: Services, query: str, top_k: int) -> list[dict[str, Any]]:
    """Top-k chunks for ``query`` as ``{"id", "contents", "title", "score", "location", "section"}`` items,
    best first (``location``/``section``: where the chunk came from, extra fields CoRAG clients ignore).

    Uses vector + BM25 + entity/graph expansion up to ``passages_max_depth`` (default 1, for speed).
    """
    s = services.settings
    depth = min(s.passages_max_depth, s.retrieval_max_depth) if s.retrieval_graph_enabled else 0
    opts = options_from_settings(
        services, top_k, depth=depth, graph=depth > 0, rerank=False, oversample=s.passages_oversample
    )
    result = retrieve(services, query, opts)
    items = [
        {"id": c.id, "contents": c.text, "title": c.title or "", "score": round(c.final, 6)}
        for c in result.top
    ]
    add_locations(items, (c.located for c in result.top))
    return items
