"""Store supervision: kill -9 of FalkorDB costs seconds (restarted on its recorded port, data intact), kill -9
of the API takes FalkorDB with it, `neorag db start` reuses the recorded port, statements never hang."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import httpx
import pytest

from app.core.config import REPO_ROOT, Settings
from app.core.errors import StoreUnavailable
from app.services.container import build_services
from app.services.diagnostics import health_report
from app.store.cypher_library import CypherLibrary
from app.store.embedded import PORT_FILE, STATE_FILE, EmbeddedServer, _pid_alive, free_port
from app.store.falkor import FalkorStore
from tests.support.serve import idle_connection_survives, served, wait_health

FIXTURES = Path(__file__).parent / "fixtures" / "ingest"
T = TypeVar("T")
NEORAG = str(Path(sys.executable).parent / "neorag")


def _state(data_dir: Path) -> dict[str, int]:
    return json.loads((data_dir / STATE_FILE).read_text())  # type: ignore[no-any-return]


def _wait_gone(pid: int, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while _pid_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    return not _pid_alive(pid)


def _wait_for(probe: Callable[[], T | None], timeout_s: float) -> T:
    """Poll ``probe`` until it returns something (not None) or fail after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        found = probe()
        if found is not None:
            return found
        time.sleep(0.1)
    raise AssertionError(f"not reached in {timeout_s} s: {probe}")


def _restarted(data_dir: Path, old_pid: int) -> dict[str, int] | None:
    """The store's state once a new, live FalkorDB process replaced ``old_pid``."""
    try:
        state = _state(data_dir)
    except (OSError, ValueError):
        return None  # being rewritten
    return state if state["pid"] != old_pid and _pid_alive(state["pid"]) else None


def _diagnostics_after_restart(url: str) -> dict[str, Any] | None:
    diag: dict[str, Any] = httpx.get(url + "/diagnostics", timeout=60).json()
    return diag if diag["store"]["supervisor"]["restarts"] >= 1 else None


def test_serve_survives_kill9_of_falkordb_and_takes_it_down_when_killed(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for name in ("guide.md", "notes.txt"):
        shutil.copy(FIXTURES / name, corpus / name)
    with served(tmp_path, roots=[corpus]) as srv:
        store_dir = srv.data_dir / "falkordb"
        ingested = httpx.post(srv.url + "/ingest", json={"path": str(corpus)}, timeout=300)
        assert ingested.status_code == 200, ingested.text
        question = {"question": "How does the approval flow progress?", "top_k": 3}
        before = httpx.post(srv.url + "/ranking/preview", json=question, timeout=60).json()
        counts = httpx.get(srv.url + "/diagnostics", timeout=60).json()["counts"]
        assert counts["nodes"]["Chunk"] > 0 and before["items"]
        # an idle keep-alive connection outlives uvicorn's default 5 s (NEORAG_API_KEEP_ALIVE_S), so a client
        # whose own idle expiry is 5 s (httpx) never reuses a connection the server is closing
        assert idle_connection_survives(srv.url, 6.5)
        # everything NeoRAG wrote is under the data dir; nothing beside the sources
        assert sorted(p.name for p in corpus.iterdir()) == ["guide.md", "notes.txt"]
        assert list((srv.data_dir / "checkpoints").glob(".ingest_ck_corpus*.json"))
        first = _state(store_dir)
        assert first["owner"] == srv.proc.pid
        assert int((store_dir / PORT_FILE).read_text()) == first["port"]

        os.kill(first["pid"], signal.SIGKILL)
        assert _wait_gone(first["pid"], 10)
        # /health can still answer from before the kill: wait for the supervisor's restart itself
        second = _wait_for(lambda: _restarted(store_dir, first["pid"]), 60)
        assert second["port"] == first["port"]
        wait_health(srv.url, 30)
        diag = _wait_for(lambda: _diagnostics_after_restart(srv.url), 30)
        supervisor = diag["store"]["supervisor"]
        assert supervisor["restarts"] == 1 and supervisor["state"] == "running"
        assert diag["counts"] == counts  # data intact (the AOF survived kill -9)
        after = httpx.post(srv.url + "/ranking/preview", json=question, timeout=60).json()
        assert [r["id"] for r in after["items"]] == [r["id"] for r in before["items"]]

        srv.proc.send_signal(signal.SIGKILL)  # kill -9 of the API: FalkorDB must not be orphaned
        srv.proc.wait()
        assert _wait_gone(second["pid"], 10), "FalkorDB outlived the API process"


def test_health_is_degraded_while_restarting_then_ok(tmp_path: Path, embedder: object) -> None:
    settings = Settings(data_dir=tmp_path / "d", graph_name="g", llm_base_url=None,
                        store_check_interval_s=1.5, embedding_query_warm_words=0)
    services = build_services(settings)
    try:
        assert services.supervisor is not None and services.server is not None
        os.kill(services.server.pid, signal.SIGKILL)
        _wait_gone(services.server.pid, 5)
        ok, body = health_report(services)
        assert not ok and body["status"] == "degraded"
        assert body["store_supervisor"]["restarts"] == 0 and "restarting" in body["hint"]
        deadline = time.monotonic() + 20
        while not health_report(services)[0] and time.monotonic() < deadline:
            time.sleep(0.1)
        assert health_report(services)[0]
        assert services.supervisor.wait_running(10)  # the restart is counted right after the store answers
        assert services.supervisor.restarts == 1
        assert services.store.run("ping")  # the store's client reconnected by itself
    finally:
        pid = services.supervisor.child.pid if services.supervisor and services.supervisor.child else None
        services.close()
    assert pid is not None and _wait_gone(pid, 10)  # closing stops the server it restarted


def test_statement_on_a_dead_store_fails_within_the_reconnect_wait(tmp_path: Path) -> None:
    server = EmbeddedServer(tmp_path / "db")
    info = server.start()
    store = FalkorStore(CypherLibrary(REPO_ROOT / "cypher", "falkordb"), "127.0.0.1", info.port, "g",
                        reconnect_wait_s=1.0, locate=server.current_port)
    try:
        assert store.run("ping")
        server.stop()
        started = time.monotonic()
        with pytest.raises(StoreUnavailable, match="unreachable"):
            store.run("ping")
        assert time.monotonic() - started < 15  # bounded: the reconnect wait plus a refused connect
        again = server.start()  # the recorded port: the same client works again
        assert again.port == info.port
        assert store.run("ping")
    finally:
        store.close()
        server.stop()


def test_a_read_waits_for_a_store_that_comes_back(tmp_path: Path) -> None:
    server = EmbeddedServer(tmp_path / "db")
    info = server.start()
    store = FalkorStore(CypherLibrary(REPO_ROOT / "cypher", "falkordb"), "127.0.0.1", info.port, "g",
                        reconnect_wait_s=20.0, locate=server.current_port)
    try:
        os.kill(info.pid, signal.SIGKILL)
        _wait_gone(info.pid, 5)
        restarter = subprocess.Popen(  # another process brings it back a moment later (on the same port)
            [sys.executable, "-c", "import time,sys; time.sleep(1); from app.store.embedded import "
             "EmbeddedServer; EmbeddedServer(sys.argv[1]).start()", str(server.data_dir)], cwd=REPO_ROOT)
        assert store.run("ping") == [{"ok": 1}]
        assert restarter.wait(timeout=60) == 0
    finally:
        store.close()
        server.stop()


def test_db_start_reuses_the_recorded_port(tmp_path: Path) -> None:
    data_dir = tmp_path / "db"
    env = {**os.environ, "NEORAG_FALKOR_DATA_DIR": str(data_dir), "NEORAG_FALKOR_PORT": "0"}
    try:
        subprocess.run([NEORAG, "db", "start"], env=env, check=True, capture_output=True, timeout=60)
        port = _state(data_dir)["port"]
        subprocess.run([NEORAG, "db", "stop"], env=env, check=True, capture_output=True, timeout=60)
        again = subprocess.run([NEORAG, "db", "start"], env=env, check=True, capture_output=True, text=True,
                               timeout=60)
        assert f"127.0.0.1:{port}" in again.stdout
        assert "owner" not in _state(data_dir)  # `db start` leaves it running on its own
    finally:
        EmbeddedServer(data_dir).stop()


def test_orphaned_server_of_a_dead_owner_is_stopped(tmp_path: Path) -> None:
    server = EmbeddedServer(tmp_path / "db")
    info = server.start()
    dead = subprocess.Popen(["true"])
    dead.wait()
    state = _state(server.data_dir)
    (server.data_dir / STATE_FILE).write_text(json.dumps({**state, "owner": dead.pid}))
    assert server.status() is None  # the watchdog stops the orphan
    assert _wait_gone(info.pid, 10)
    assert server.start().port == info.port
    server.stop()


def test_neo4j_statement_on_a_refused_connection_fails_within_the_reconnect_wait() -> None:
    from app.store.neo4j_store import Neo4jStore

    port = free_port()  # nothing listens there
    store = Neo4jStore(CypherLibrary(REPO_ROOT / "cypher", "neo4j"), f"bolt://127.0.0.1:{port}", "neo4j", "x",
                       timeout_s=30, reconnect_wait_s=1.0)
    try:
        started = time.monotonic()
        with pytest.raises(StoreUnavailable, match="unreachable"):
            store.run("ping")
        assert time.monotonic() - started < 15  # bounded by the reconnect wait, not the 30 s store timeout
        assert store.health().reachable is False
    finally:
        store.close()
