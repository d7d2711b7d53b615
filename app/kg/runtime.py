"""The process's KG read cache, kept on ``services.extras`` (created on first use)."""

from __future__ import annotations

from typing import Any

from app.kg.cache import KGCache
from app.kg.combine import combining
from app.store.base import GraphStore

CACHE_KEY = "kg_cache"
READS_KEY = "kg_reads"


def kg_cache(extras: dict[str, Any], max_triples: int, check_ms: float = 0.0) -> KGCache:
    """The shared :class:`KGCache` (its stats are added to /diagnostics as ``kg_cache``)."""
    cache = extras.get(CACHE_KEY)
    if cache is None:
        cache = KGCache(max_triples, check_ms=check_ms)
        extras[CACHE_KEY] = cache
        extras.setdefault("diagnostics", {})[CACHE_KEY] = cache.stats
    return cache  # type: ignore[no-any-return]


def register_kg_reads(extras: dict[str, Any], store: GraphStore) -> None:
    """Add ``kg_reads`` to /diagnostics: cold reads asked and store round trips made, per statement
    (:mod:`app.kg.combine`; reads that overlapped shared a round trip)."""
    diagnostics = extras.setdefault("diagnostics", {})
    if READS_KEY not in diagnostics:
        diagnostics[READS_KEY] = combining(store).stats  # type: ignore[attr-defined]
