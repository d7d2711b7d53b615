"""Module-scoped KG fixtures: the real PathQuestion and WebQTrn fixtures loaded once per module."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from app.core.config import Settings
from app.store.base import GraphStore
from ingest.kg.loader import load_path
from tests.support.backends import Backend

KG_FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "kg"
PQ = KG_FIXTURES / "pathquestion"
ROG = KG_FIXTURES / "rog"


def kg_settings(backend: Backend, **extra: object) -> Settings:
    """Settings on the test's backend with a fresh graph."""
    return backend.settings(f"kg_{uuid.uuid4().hex[:10]}", **extra)


def load_fixtures(store: GraphStore, pq: bool = True) -> None:
    """webqsp (WebQTrn fixtures) and, if ``pq``, pq2h / pq3h."""
    load_path(store, ROG, "webqsp")
    if pq:
        load_path(store, PQ / "PQ-2H.txt", "pq2h")
        load_path(store, PQ / "PQ-3H.txt", "pq3h")


@contextmanager
def loaded_store(backend: Backend, settings: Settings, pq: bool = True) -> Iterator[GraphStore]:
    """The graph with the KG fixtures loaded (see ``load_fixtures``); dropped afterwards."""
    backend.claim(settings.graph_name)
    store = backend.open_store(settings)
    try:
        load_fixtures(store, pq)
        yield store
    finally:
        backend.drop(settings.graph_name)
        store.close()


@contextmanager
def shared_kg(request: pytest.FixtureRequest, backend: Backend, settings: Settings,
              pq: bool = True) -> Iterator[GraphStore]:
    """``loaded_store`` for a module fixture: loaded once, reloaded when another test took the database."""
    store = backend.open_store(settings)
    try:
        with backend.shared_graph(request, settings, lambda: load_fixtures(store, pq)):
            yield store
    finally:
        store.close()
