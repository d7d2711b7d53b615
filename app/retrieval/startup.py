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


def warm_indexes(services: Services) -> None:
    """Build the in-process indexes the settings use (vectors, BM25, entity graph) now, so the first
    question does not read the whole store; a question asked meanwhile waits for the same build."""
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
        try:
            index.current()
        except Exception as exc:  # noqa: BLE001 - the first question builds it (and reports) instead
            log.warning("warming the %s failed: %s", index.label, exc)


def start_warming(services: Services) -> threading.Thread:
    """``warm_indexes`` on a daemon thread (the server answers meanwhile)."""
    thread = threading.Thread(target=warm_indexes, args=(services,), name="retrieval-warm", daemon=True)
    thread.start()
    return thread
