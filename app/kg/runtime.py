"""The process's KG read cache, kept on ``services.extras`` (created on first use)."""

from __future__ import annotations

from typing import Any

from app.kg.cache import KGCache

CACHE_KEY = "kg_cache"


def kg_cache(extras: dict[str, Any], max_triples: int, check_ms: float = 0.0) -> KGCache:
    """The shared :class:`KGCache` (its stats are added to /diagnostics as ``kg_cache``)."""
    cache = extras.get(CACHE_KEY)
    if cache is None:
        cache = KGCache(max_triples, check_ms=check_ms)
        extras[CACHE_KEY] = cache
        extras.setdefault("diagnostics", {})[CACHE_KEY] = cache.stats
    return cache  # type: ignore[no-any-return]
