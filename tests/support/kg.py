"""Module-scoped KG fixtures: the real PathQuestion and WebQTrn fixtures loaded once per module."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from app.core.config import Settings
from app.store.cypher_library import CypherLibrary
from app.store.embedded import ServerInfo
from app.store.falkor import FalkorStore
from ingest.kg.loader import load_path

KG_FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "kg"
PQ = KG_FIXTURES / "pathquestion"
ROG = KG_FIXTURES / "rog"


def kg_settings(server: ServerInfo, **extra: object) -> Settings:
    """Settings on the session FalkorDB with a fresh graph."""
    return Settings(backend="embedded", falkor_data_dir=server.data_dir, falkor_port=server.port,
                    graph_name=f"kg_{uuid.uuid4().hex[:10]}", llm_base_url=None, **extra)  # type: ignore[arg-type]


def falkor_store(settings: Settings) -> FalkorStore:
    """A FalkorStore on the settings' graph."""
    return FalkorStore(CypherLibrary(settings.cypher_dir, "falkordb"), settings.falkor_host,
                       settings.falkor_port, settings.graph_name)


@contextmanager
def loaded_store(settings: Settings, pq: bool = True) -> Iterator[FalkorStore]:
    """The graph with webqsp (WebQTrn fixtures) and, if ``pq``, pq2h / pq3h loaded; dropped afterwards."""
    store = falkor_store(settings)
    try:
        load_path(store, ROG, "webqsp")
        if pq:
            load_path(store, PQ / "PQ-2H.txt", "pq2h")
            load_path(store, PQ / "PQ-3H.txt", "pq3h")
        yield store
    finally:
        store.drop_graph()
        store.close()
