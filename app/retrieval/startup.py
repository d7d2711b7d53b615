"""Retrieval's start-up hooks: its /diagnostics section (``build_services``) and the server's warm-up."""

from __future__ import annotations

import logging
import threading
from typing import Any

from app.retrieval.refreshing import RefreshingIndex
from app.retrieval.state import register_diagnostics
from app.services.container import Services

log = logging.getLogger(__name__)


def startup(services: Services) -> None:
    """Register the retrieval section of /diagnostics (weights, fusion, quotas, caches)."""
    register_diagnostics(services)


def warm_indexes(services: Services, stop: threading.Event | None = None) -> None:
    """Build the in-process indexes the settings use (vectors, BM25, entity graph) now, so the first
    question does not read the whole store; a question asked meanwhile waits for the same build.
    ``stop`` set: no further index is started (the server is shutting down)."""
    from app.retrieval.bm25 import lexical_index
    from app.retrieval.graph_index import graph_index
    from app.retrieval.vectors import vector_index

    s, extras, store = services.settings, services.extras, services.store
    builds: list[RefreshingIndex[Any]] = [graph_index(extras, store)]
    if s.retrieval_bm25_backend == "memory":
        builds.insert(0, lexical_index(extras, store))
    if s.retrieval_vector_backend == "memory":
        builds.insert(0, vector_index(extras, store))
    for index in builds:
        if stop is not None and stop.is_set():
            return
        try:
            index.current()
        except Exception as exc:  # noqa: BLE001 - the first question builds it (and reports) instead
            log.warning("warming the %s failed: %s", index.label, exc)


class Warming:
    """``warm_indexes`` on a daemon thread (the server answers meanwhile); ``finish`` before the store
    closes, so no read is in flight on a closing driver."""

    def __init__(self, services: Services) -> None:
        self._stop = threading.Event()
        self._thread = threading.Thread(target=warm_indexes, args=(services, self._stop),
                                        name="retrieval-warm", daemon=True)
        self._thread.start()

    def finish(self, timeout_s: float = 30.0) -> bool:
        """Start no further build and wait for the one under way; False if it still runs after the wait."""
        self._stop.set()
        self._thread.join(timeout_s)
        return not self._thread.is_alive()


def start_warming(services: Services) -> Warming:
    """Warm the in-process indexes in the background (see ``Warming``)."""
    return Warming(services)
