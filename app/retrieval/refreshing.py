"""An in-process index built from the store and kept fresh: the rules of the BM25 index and the entity graph.

Stale after an ingest (``mark_stale`` is an ingest listener) or when the store's chunk count changes (read at
most every ``check_every_s``). The first request builds synchronously (concurrent first requests wait for one
build), and so does the first after an empty index went stale (e.g. built at start, before the first
ingest); later rebuilds run in a background thread while the old index keeps serving.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any, Generic, Protocol, TypeVar

from app.store.base import GraphStore


class Measured(Protocol):
    """What an index reports to /diagnostics: its size in memory."""

    def memory_bytes(self) -> int: ...


T = TypeVar("T", bound=Measured)
Idx = TypeVar("Idx", bound="RefreshingIndex[Any]")


class RefreshingIndex(Generic[T]):
    """The process's copy of one index over the store's chunks; subclasses say how to load and describe it."""

    label = "index"  # names the index in logs
    slug = "index"  # names its rebuild thread

    def __init__(self, store: GraphStore, check_every_s: float = 5.0) -> None:
        self.store = store
        self.check_every_s = check_every_s
        self.index: T | None = None
        self.chunks = -1
        self.stale = True
        self.built_at = 0.0
        self.build_ms = 0.0
        self._checked = 0.0
        self._lock = threading.Lock()
        self._first_build = threading.Lock()
        self._building = False

    def _load(self) -> tuple[T, int, dict[str, Any]]:
        """Read the store and build: the index, its chunk count and other attributes published with it."""
        raise NotImplementedError

    def _sizes(self, index: T | None) -> dict[str, int]:
        """The index's counts for ``stats`` (``chunks`` first; zeros without an index)."""
        raise NotImplementedError

    def mark_stale(self, *_: Any, **__: Any) -> None:
        """Ingest listener: the next search rebuilds (in the background when an index exists)."""
        self.stale = True

    @property
    def fresh(self) -> bool:
        """Built, and no change to the store is known since (no ingest/delete, no rebuild under way)."""
        return self.index is not None and not self.stale and not self._building

    def _count(self) -> int:
        return int(self.store.run("retrieval_chunk_count")[0]["chunks"])

    def build(self) -> T:
        """Load from the store and build the index (synchronously); it replaces the served one."""
        t = time.perf_counter()
        index, chunks, published = self._load()
        with self._lock:
            self.index, self.chunks, self.stale = index, chunks, False
            for name, value in published.items():
                setattr(self, name, value)
            self.built_at, self.build_ms = time.time(), (time.perf_counter() - t) * 1000
        sizes = ", ".join(f"{v} {k}" for k, v in self._sizes(index).items())
        logging.getLogger(type(self).__module__).info("%s: %s in %.0f ms", self.label, sizes, self.build_ms)
        return index

    def _background_build(self) -> None:
        try:
            self.build()
        except Exception as exc:  # noqa: BLE001 - the old index keeps serving
            logging.getLogger(type(self).__module__).warning("%s rebuild failed: %s", self.label, exc)
        finally:
            self._building = False

    def current(self) -> T:
        """A usable index: built now when there is none, refreshed in the background when stale."""
        now = time.monotonic()
        if not self.stale and now - self._checked > self.check_every_s:
            self._checked = now
            if self._count() != self.chunks:
                self.stale = True
        if self.index is None or (self.stale and self.chunks == 0):  # nothing worth serving meanwhile
            with self._first_build:  # concurrent first requests wait for one build
                if self.index is None or (self.stale and self.chunks == 0):
                    return self.build()
            return self.index  # type: ignore[return-value]  # built by the request we waited for
        if self.stale and not self._building:
            self._building = True
            self.stale = False
            threading.Thread(target=self._background_build, name=self.slug + "-rebuild", daemon=True).start()
        return self.index

    def stats(self) -> dict[str, Any]:
        """Sizes, memory, last build time and staleness for /diagnostics."""
        idx = self.index
        return {
            **self._sizes(idx),
            "memory_mb": round(idx.memory_bytes() / 2**20, 2) if idx else 0.0,
            "build_ms": round(self.build_ms, 1),
            "stale": self.stale,
        }


def shared_index(extras: dict[str, Any], key: str, make: Callable[[], Idx]) -> Idx:
    """The index kept in ``extras[key]`` (made on first use, then registered as an ingest listener)."""
    idx = extras.get(key)
    if idx is None:
        idx = extras.setdefault(key, make())
        extras.setdefault("ingest_listeners", []).append(idx.mark_stale)
    return idx  # type: ignore[no-any-return]
