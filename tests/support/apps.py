"""Helpers to run the real app against the session FalkorDB."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from fastapi.testclient import TestClient

from app.api.main import create_app
from app.core.config import Settings
from app.services.container import build_services


@contextmanager
def app_client(settings: Settings) -> Iterator[TestClient]:
    """A TestClient whose lifespan builds the real services (store already running)."""
    app = create_app(settings, services_factory=lambda s: build_services(s, start_embedded=False))
    with TestClient(app) as client:
        yield client
