"""The cross-process ingest lock held in the store: two app instances on one store never run the same ingest
twice (409 with a clear message), a holder that died (kill -9) loses the lock after its TTL, deletes too."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from app.core.config import REPO_ROOT, Settings
from app.services.store_lock import StoreLock
from app.store.falkor import FalkorStore
from tests.support.apps import app_client
from tests.support.backends import Backend
from tests.support.fake_openai import ScriptedOpenAI

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
