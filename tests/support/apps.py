"""Helpers to run the real app against the session FalkorDB."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from fastapi.testclient import TestClient

from app.api.main import create_app
from app.core.config import Settings
from app.services.container import build_services
from app.store.embedded import EmbeddedServer, free_port


@contextmanager
def app_client(settings: Settings) -> Iterator[TestClient]:
    """A TestClient whose lifespan builds the real services (store already running)."""
    app = create_app(settings, services_factory=lambda s: build_services(s, start_embedded=False))
    with TestClient(app, base_url="http://127.0.0.1") as client:  # a loopback Host (DNS-rebinding check)
        yield client


@contextmanager
def stoppable_store(tmp_path: Path, graph_name: str = "g") -> Iterator[tuple[EmbeddedServer, Settings]]:
    """A FalkorDB of the test's own (so the test may stop it to simulate an outage) and settings on it."""
    port = free_port()
    server = EmbeddedServer(tmp_path / "db", port=port)
    server.start()
    try:
        yield server, Settings(falkor_data_dir=tmp_path / "db", falkor_port=port, graph_name=graph_name,
                               llm_base_url=None)
    finally:
        server.stop()
