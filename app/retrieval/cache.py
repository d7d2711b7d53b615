"""LRU + TTL caches for query embeddings and answers, kept in ``services.extras``."""

from __future__ import annotations

import hashlib
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

V = TypeVar("V")

EXTRAS_KEY = "retrieval_caches"


class TTLCache(Generic[V]):
    """A thread-safe LRU cache whose entries also expire after ``ttl_s`` seconds."""

    def __init__(self, max_size: int, ttl_s: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.max_size, self.ttl_s, self._clock = max_size, ttl_s, clock
        self._data: OrderedDict[str, tuple[float, V]] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def get(self, key: str) -> V | None:
        """The value, or None when absent or expired (an expired entry is dropped)."""
        with self._lock:
            item = self._data.get(key)
            if item is None or self._clock() - item[0] > self.ttl_s:
                if item is not None:
                    del self._data[key]
                self.misses += 1
                return None
            self._data.move_to_end(key)
            self.hits += 1
            return item[1]

    def put(self, key: str, value: V) -> None:
        """Insert or refresh; evicts the least recently used entries beyond ``max_size``."""
        if self.max_size <= 0:
            return
        with self._lock:
            self._data[key] = (self._clock(), value)
            self._data.move_to_end(key)
            while len(self._data) > self.max_size:
                self._data.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._data.clear()

    def keys(self) -> list[str]:
        """Live keys, most recently used last."""
        now = self._clock()
        with self._lock:
            return [k for k, (t, _) in self._data.items() if now - t <= self.ttl_s]

    def __len__(self) -> int:
        return len(self.keys())


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
