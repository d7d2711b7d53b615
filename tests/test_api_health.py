"""GET /health and GET /diagnostics against the real stores (both backends), including store-down."""

from __future__ import annotations

from pathlib import Path

from app import API_VERSION
from app.core.config import Settings
from tests.support.apps import app_client
from tests.support.backends import Backend


def test_health_ok(settings: Settings) -> None:
    with app_client(settings) as client:
        resp = client.get("/health")
    assert resp.status_code == 200
    assert resp.json() == {"status": "ok", "api_version": API_VERSION}


def test_diagnostics_reports_indexes_embedder_counts(settings: Settings, backend: Backend) -> None:
    with app_client(settings) as client:
        body = client.get("/diagnostics").json()
    assert body["api_version"] == API_VERSION
    assert body["backend"] == settings.backend
    assert body["store"]["reachable"] is True
    assert body["store"]["version"].startswith(backend.version_prefix)
    assert body["embedding"] == {"model": "all-MiniLM-L6-v2", "dimension": 384,
                                 "cache_size": body["embedding"]["cache_size"]}
    # vectors are searched in process; the store keeps its own index where loading it costs nothing
    assert body["vector_index"]["searched_in"] == "memory"
    assert body["vector_index"]["present"] is (backend.name == "neo4j")
    assert body["vector_index"]["dimension_mismatch"] is False
    with app_client(settings.model_copy(update={"retrieval_vector_backend": "store"})) as client:
        indexed = client.get("/diagnostics").json()["vector_index"]
    assert indexed["present"] is True and indexed["dimension"] == 384 and indexed["searched_in"] == "store"
    types = {(i["label"], i["property"], i["type"]) for i in body["indexes"]}
    assert ("Chunk", "text", "FULLTEXT") in types
    assert ("Chunk", "id", "RANGE") in types
    assert body["llm"]["configured"] is False
    assert isinstance(body["counts"]["nodes"], dict)
    if backend.name == "neo4j":  # server version, edition, index states and dimensions
        assert body["store"]["server"]["edition"] == "community"
        assert body["store"]["server"]["version"] == body["store"]["version"].removeprefix("Neo4j ")
        assert body["store"]["server"]["database"] == "neo4j"
        assert {i["state"] for i in body["indexes"]} <= {"ONLINE", "POPULATING"}
        assert all(i["label"] and i["property"] for i in body["indexes"])  # no token lookup indexes
    else:
        assert body["store"]["server"] == {}


def test_unknown_route_is_json_404(settings: Settings) -> None:
    with app_client(settings) as client:
        resp = client.get("/no-such-thing")
    assert resp.status_code == 404
    assert resp.json() == {"error": "not_found", "message": "Not Found"}  # the shared error shape


def test_store_down_then_recovered_without_restart(tmp_path: Path, backend: Backend) -> None:
    with backend.stoppable(tmp_path) as (server, settings), app_client(settings) as client:
        assert client.get("/health").status_code == 200
        server.stop()
        down = client.get("/health")
        assert down.status_code == 503
        assert down.json()["status"] == "degraded"
        assert backend.down_hint in down.json()["hint"]
        diag = client.get("/diagnostics")
        assert diag.status_code == 200 and diag.json()["store"]["reachable"] is False
        server.start()
        assert client.get("/health").status_code == 200
