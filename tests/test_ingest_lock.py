"""The cross-process ingest lock held in the store: two app instances on one store never run the same ingest
twice (409 with a clear message), a holder that died (kill -9) loses the lock after its TTL, deletes too."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from mcp import Client
from typer.testing import CliRunner

from app.cli import cli
from app.core.config import REPO_ROOT, Settings
from app.services.store_lock import StoreLock
from app.store.falkor import FalkorStore
from tests.browser.server import live_server
from tests.support.apps import app_client
from tests.support.backends import Backend
from tests.support.fake_openai import ScriptedOpenAI
from tests.support.ingest_graph import q

FIX = Path(__file__).parent / "fixtures" / "ingest"

HOLDER = textwrap.dedent("""
    import sys, time
    from app.core.config import Settings
    from app.services.store_lock import StoreLock
    from app.store.factory import make_store

    key = sys.argv[1]
    settings = Settings()  # the test's store and graph, from its NEORAG_* variables
    lock = StoreLock(make_store(settings), key, "ingest", ttl_s=3)
    lock.acquire()
    print("held", flush=True)
    time.sleep(600)
""")


def _corpus(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    (root / "docs").mkdir(parents=True)
    shutil.copy(FIX / "notes.txt", root / "docs" / "notes.txt")
    return root


def test_two_apps_on_one_store_run_an_ingest_once(settings: Settings, store: FalkorStore,
                                                  tmp_path: Path) -> None:
    root = _corpus(tmp_path)
    path = str((root / "docs").resolve())
    slow = {"sleep": 0.3, "content": '{"relations": []}'}  # a slow LLM keeps the first ingest running
    with ScriptedOpenAI([], default=slow) as llm:
        cfg = settings.model_copy(update={"ingest_roots": [root], "llm_base_url": llm.base_url,
                                          "ingest_chunk_size": 300, "ingest_chunk_overlap": 60})
        with app_client(cfg) as first, app_client(cfg) as second:  # two processes' worth of services
            with first.stream("GET", "/ingest/stream", params={"path": path}) as resp:
                assert next(resp.iter_lines()).startswith("event: start")
            busy = second.post("/ingest", json={"path": path})
            assert busy.status_code == 409, busy.text
            body = busy.json()
            assert body["field"] == "path" and "another NeoRAG process" in body["message"]
            assert "wait for it to finish" in body["message"]
            assert second.get("/health").status_code == 200
            deadline = time.monotonic() + 180
            while time.monotonic() < deadline:  # the first finishes and releases the lock
                again = second.post("/ingest", json={"path": path})
                if again.status_code != 409:
                    break
                time.sleep(0.5)
            assert again.status_code == 200, again.text
            assert again.json()["chunks_new"] == 0  # nothing was ingested twice
    assert store.run("ingest_lock_get", {"key": path}) == []  # released


def test_a_dead_holders_lock_expires(settings: Settings, backend: Backend, tmp_path: Path) -> None:
    root = _corpus(tmp_path)
    path = str((root / "docs").resolve())
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("NEORAG_")}, **backend.env(settings),
           "PYTHONPATH": str(REPO_ROOT)}
    argv = [sys.executable, "-c", HOLDER, path]
    holder = subprocess.Popen(argv, cwd=REPO_ROOT, env=env, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with app_client(settings.model_copy(update={"ingest_roots": [root]})) as client:
            busy = client.post("/ingest", json={"path": path})
            assert busy.status_code == 409 and "another NeoRAG process" in busy.json()["message"]
            time.sleep(1.5)  # still renewed by the live holder (heartbeat every 1 s)
            assert client.post("/ingest", json={"path": path}).status_code == 409
            holder.send_signal(signal.SIGKILL)
            holder.wait()
            deadline = time.monotonic() + 30
            status = 409
            while status == 409 and time.monotonic() < deadline:
                time.sleep(0.5)
                status = client.post("/ingest", json={"path": path}).status_code
            assert status == 200  # the dead holder's lock expired
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait()


def test_lock_release_only_by_its_holder(store: FalkorStore) -> None:
    store.bootstrap(384)
    mine = StoreLock(store, "/x", "delete", ttl_s=30)
    mine.acquire()
    other = StoreLock(store, "/x", "ingest", ttl_s=30)
    other.release()  # not the holder: nothing happens
    held = store.run("ingest_lock_get", {"key": "/x"})
    assert held[0]["holder"] == mine.holder and held[0]["what"] == "delete"
    try:
        other.acquire()
        raise AssertionError("a second holder got the lock")
    except Exception as exc:  # noqa: BLE001
        assert "a delete of /x is already running" in str(exc)
    mine.release()
    with other:
        assert store.run("ingest_lock_get", {"key": "/x"})[0]["holder"] == other.holder
    assert store.run("ingest_lock_get", {"key": "/x"}) == []


def _no_lock_left(store: FalkorStore) -> None:
    assert q(store, "MATCH (l:IngestLock) RETURN count(l) AS n")[0]["n"] == 0


def _stream(client: TestClient, path: str) -> list[dict[str, Any]]:
    with client.stream("GET", "/ingest/stream", params={"path": path}) as resp:
        assert resp.status_code == 200, resp.read()
        return [json.loads(line.split(":", 1)[1]) for line in resp.iter_lines() if line.startswith("data:")]


def test_every_entry_point_ingests_twice_back_to_back(
        settings: Settings, store: FalkorStore, backend: Backend, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """POST /ingest, /ingest/stream, POST /documents, the CLI and MCP: each answers only once its lock is
    released (a slow store makes the release take a while), so the same ingest right after is no 409 and no
    lock is left in the store (issue 25, item 8: on Neo4j a re-ingest got 409 for a finished job)."""
    root = _corpus(tmp_path)
    path = str((root / "docs").resolve())
    original, released = StoreLock.release, []

    def slow_release(self: StoreLock) -> None:
        time.sleep(0.3)  # a slow store: the answer must still wait for the release
        original(self)
        released.append(self.key)

    monkeypatch.setattr(StoreLock, "release", slow_release)
    cfg = settings.model_copy(update={"ingest_roots": [root]})
    with app_client(cfg) as client:
        for _ in range(2):
            done = client.post("/ingest", json={"path": path})
            assert done.status_code == 200, done.text
            _no_lock_left(store)
        for _ in range(2):
            events = _stream(client, path)
            assert [e for e in events if e.get("stage") == "result"], events
            assert not [e for e in events if e.get("stage") == "error"], events
            _no_lock_left(store)
        for _ in range(2):
            up = client.post("/documents", files={"file": ("memo.txt", b"The memo names Ada as the owner.")})
            assert up.status_code == 201 and up.json()["documents"][0]["ingest"] is not None, up.text
            _no_lock_left(store)
    for key, value in backend.env(cfg).items():
        monkeypatch.setenv(key, value)
    for _ in range(2):
        result = CliRunner().invoke(cli, ["ingest", path, "--no-checkpoint"])
        assert result.exit_code == 0, result.output
        _no_lock_left(store)
    with live_server(cfg) as live:

        async def run() -> None:
            async with Client(f"{live.url}/mcp", read_timeout_seconds=300) as mcp:
                for _ in range(2):
                    answer = await mcp.call_tool("ingest", {"path": path})
                    assert not answer.is_error, answer.content
                    _no_lock_left(store)

        asyncio.run(run())
    assert len(released) == 10 and set(released) >= {path}, released


def test_a_failed_release_is_an_error(settings: Settings, store: FalkorStore, tmp_path: Path,
                                      monkeypatch: pytest.MonkeyPatch,
                                      caplog: pytest.LogCaptureFixture) -> None:
    """The store refusing to drop the lock: POST /ingest answers 503 naming the lock and when it expires,
    /ingest/stream ends with an error event, and the log has an ERROR line (no longer a warning)."""
    root = _corpus(tmp_path)
    (root / "other").mkdir()
    shutil.copy(FIX / "notes.txt", root / "other" / "notes.txt")
    original = type(store).run

    def failing_run(self: Any, name: str, params: dict[str, Any] | None = None) -> Any:
        if name == "ingest_lock_release":
            raise RuntimeError("simulated store failure")
        return original(self, name, params)

    monkeypatch.setattr(type(store), "run", failing_run)
    with app_client(settings.model_copy(update={"ingest_roots": [root]})) as client:
        failed = client.post("/ingest", json={"path": str((root / "docs").resolve())})
        assert failed.status_code == 503, failed.text
        body = failed.json()
        assert body["error"] == "store_unavailable" and "releasing its lock" in body["message"], body
        assert "simulated store failure" in body["reason"] and "expires" in body["hint"], body
        events = _stream(client, str((root / "other").resolve()))
        assert events[-1]["stage"] == "error" and "releasing its lock" in events[-1]["error"], events[-1]
    errors = [r for r in caplog.records if r.name == "app.services.store_lock" and r.levelno == logging.ERROR]
    assert len(errors) == 2 and "simulated store failure" in errors[0].getMessage()


@pytest.mark.backends("falkordb")  # the append-only file is the embedded FalkorDB's (Neo4j has its own logs)
def test_ingest_and_delete_jobs_compact_the_store_aof(settings: Settings, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """After every write job (POST /ingest, a delete) the AOF is rewritten once it grew past
    NEORAG_FALKOR_AOF_REWRITE_MB (issue 25, item 5; app/store/aof.py does the rewrite)."""
    import app.store.aof as aof

    calls: list[tuple[int, int, bool]] = []
    original = aof.compact_if_grown

    def spy(host: str, port: int, threshold: int) -> bool:
        started = original(host, port, threshold)
        calls.append((port, threshold, started))
        return started

    monkeypatch.setattr(aof, "compact_if_grown", spy)
    root = _corpus(tmp_path)
    cfg = settings.model_copy(update={"ingest_roots": [root], "falkor_aof_rewrite_mb": 1})
    with app_client(cfg) as client:
        assert client.post("/ingest", json={"path": str(root / "docs")}).status_code == 200
        assert [(port, threshold) for port, threshold, _ in calls] == [(cfg.falkor_port, 1_000_000)]
        up = client.post("/documents", files={"file": ("memo.txt", b"The memo names Ada as the owner.")})
        doc = up.json()["documents"][0]["id"]
        assert client.delete(f"/documents/{doc}").status_code == 200
        assert len(calls) == 3  # the upload's ingest and the delete
    off = settings.model_copy(update={"ingest_roots": [root], "falkor_aof_rewrite_mb": 0})
    with app_client(off) as client:
        assert client.post("/ingest", json={"path": str(root / "docs")}).status_code == 200
    assert len(calls) == 3  # 0 = off
