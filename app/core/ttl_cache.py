"""A thread-safe LRU cache with a time-to-live per entry (the query caches, the kept evidence graphs)."""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, TypeVar

V = TypeVar("V")


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
