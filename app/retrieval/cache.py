"""LRU + TTL caches for query embeddings and answers, kept in ``services.extras``."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from app.core.ttl_cache import TTLCache

EXTRAS_KEY = "retrieval_caches"


def key_hash(key: str) -> str:
    """How /cache/stats shows a cache key to a read key: ``sha256:`` + the first 16 hex digits of the
    SHA-256 of its UTF-8 text (a client can match its own question; nobody reads another's)."""
    return "sha256:" + hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:16]


@dataclass
class RetrievalCaches:
    """The two caches of the query path."""

    embeddings: TTLCache[list[float]]
    answers: TTLCache[dict[str, Any]]

    def stats(self, max_keys: int = 50, texts: bool = False) -> dict[str, Any]:
        """The GET /cache/stats body: the keys (other clients' questions) as :func:`key_hash` digests
        unless ``texts`` (a write key asked for them)."""
        emb, ans = self.embeddings.keys()[-max_keys:], self.answers.keys()[-max_keys:]
        shown = (lambda keys: keys) if texts else (lambda keys: [key_hash(k) for k in keys])
        return {
            "embedding_cache_size": len(self.embeddings),
            "answer_cache_size": len(self.answers),
            "embedding_cache_keys": shown(emb),
            "answer_cache_keys": shown(ans),
            "keys_shown_as": "text" if texts else "sha256",
            "embedding_cache_hits": self.embeddings.hits,
            "embedding_cache_misses": self.embeddings.misses,
            "answer_cache_hits": self.answers.hits,
            "answer_cache_misses": self.answers.misses,
        }

    def clear(self) -> None:
        self.embeddings.clear()
        self.answers.clear()


def caches_for(
    extras: dict[str, Any], embedding_size: int, answer_size: int, ttl_s: float
) -> RetrievalCaches:
    """The caches stored in ``extras`` (created on first use; ingest listeners then drop cached answers)."""
    caches = extras.get(EXTRAS_KEY)
    if caches is None:
        caches = extras.setdefault(
            EXTRAS_KEY, RetrievalCaches(TTLCache(embedding_size, ttl_s), TTLCache(answer_size, ttl_s))
        )
        listeners = extras.setdefault("ingest_listeners", [])
        if not any(getattr(f, "_neorag_answer_cache", False) for f in listeners):

            def invalidate(*_args: Any, **_kwargs: Any) -> None:
                extras[EXTRAS_KEY].answers.clear()

            invalidate._neorag_answer_cache = True  # type: ignore[attr-defined]
            listeners.append(invalidate)
    return caches  # type: ignore[no-any-return]
