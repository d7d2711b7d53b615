"""Shared fixtures: one embedded FalkorDB per test session, one graph per test."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
# App tests compare rankings with exact fp32 query vectors and should not spend CPU choosing the fast
# query encoder in every app they start; tests/test_query_encoder.py sets "auto" itself.
os.environ.setdefault("NEORAG_EMBEDDING_QUERY_PRECISION", "fp32")

from app.core.config import Settings  # noqa: E402
from app.store.cypher_library import CypherLibrary  # noqa: E402
from app.store.embedded import EmbeddedServer, ServerInfo  # noqa: E402
from app.store.falkor import FalkorStore  # noqa: E402

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture(scope="session")
def falkor_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerInfo]:
    """A real embedded FalkorDB started through NeoRAG's own manager."""
    server = EmbeddedServer(tmp_path_factory.mktemp("falkordb"))
    info = server.start()
    yield info
    server.stop()


@pytest.fixture
def graph_name() -> str:
    """A graph name unique to this test."""
    return f"t_{uuid.uuid4().hex[:12]}"


@pytest.fixture
def settings(falkor_server: ServerInfo, graph_name: str, tmp_path: Path) -> Settings:
    """Settings pointing at the session FalkorDB and this test's own graph."""
    return Settings(
        backend="embedded", falkor_data_dir=falkor_server.data_dir, falkor_port=falkor_server.port,
        graph_name=graph_name, llm_base_url=None, data_dir=tmp_path / ".neorag",
    )


@pytest.fixture
def store(settings: Settings, falkor_server: ServerInfo) -> Iterator[FalkorStore]:
    """A FalkorStore on this test's own graph (dropped afterwards)."""
    s = FalkorStore(CypherLibrary(settings.cypher_dir, "falkordb"), "127.0.0.1", falkor_server.port,
                    settings.graph_name)
    yield s
    s.drop_graph()
    s.close()


@pytest.fixture(scope="session")
def embedder():  # type: ignore[no-untyped-def]
    """The real offline all-MiniLM-L6-v2 embedder (loaded once)."""
    from app.services.embedder import shared_embedder

    return shared_embedder()
