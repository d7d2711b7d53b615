"""The embedded FalkorDB manager: start, reuse, status, stop, persistence, failures, and `neorag db`."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from app.core.config import REPO_ROOT
from app.core.errors import ConfigError, StoreUnavailable
from app.store.cypher_library import CypherLibrary
from app.store.embedded import STATE_FILE, EmbeddedServer, free_port
from app.store.falkor import FalkorStore

NEORAG = str(Path(sys.executable).parent / "neorag")


@pytest.fixture
def server(tmp_path: Path) -> Iterator[EmbeddedServer]:
    """A manager on a fresh data dir; whatever it started is stopped afterwards."""
    srv = EmbeddedServer(tmp_path / "db")
    yield srv
    srv.stop()


def _cmdline(pid: int) -> list[str]:
    return Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")


def test_start_then_reuse_same_process(server: EmbeddedServer) -> None:
    first = server.start()
    assert first.started_here is True
    again = EmbeddedServer(server.data_dir).start()  # e.g. a second `neorag serve`
    assert (again.pid, again.port, again.started_here) == (first.pid, first.port, False)
    state = json.loads((server.data_dir / STATE_FILE).read_text())
    assert state == {"pid": first.pid, "port": first.port}
    status = server.status()
    assert status is not None and status.pid == first.pid and status.port == first.port


def test_command_line_is_safe_and_never_sets_bolt_port(server: EmbeddedServer) -> None:
    info = server.start()
    args = server.command(info.port)
    assert not any("BOLT" in a for a in args)
    assert args[args.index("--bind") + 1] == "127.0.0.1"
    assert args[args.index("--appendonly") + 1] == "yes"
    assert args[args.index("--dir") + 1] == str(server.data_dir)
    module_at = args.index("--loadmodule") + 1
    assert args[module_at].endswith(".so")
    assert args[module_at + 1:module_at + 3] == ["DELTA_MAX_PENDING_CHANGES", "100000"]  # the default
    assert args[module_at + 3].startswith("--")
    # the running process is that command (redis rewrites its title to "<binary> host:port")
    assert _cmdline(info.pid)[0].endswith(f"127.0.0.1:{info.port}")
    assert "BOLT_PORT" not in Path(f"/proc/{info.pid}/environ").read_bytes().decode(errors="replace")
    conn = redis.Redis(port=info.port)
    config = {**conn.config_get("bind"), **conn.config_get("appendonly"), **conn.config_get("dir")}
    delta = conn.execute_command("GRAPH.CONFIG", "GET", "DELTA_MAX_PENDING_CHANGES")
    conn.close()
    assert config == {"bind": "127.0.0.1", "appendonly": "yes", "dir": str(server.data_dir)}
    assert delta == [b"DELTA_MAX_PENDING_CHANGES", 100000]  # the module argument reached FalkorDB


@pytest.mark.parametrize(("args", "fragment"), [
    ("BOLT_PORT 7687", "may not set BOLT_PORT"),
    ("DELTA_MAX_PENDING_CHANGES 5 bolt_port 1", "may not set BOLT_PORT"),
    ("DELTA_MAX_PENDING_CHANGES", "NAME VALUE pairs"),
    ("--port 1", "NAME VALUE pairs"),
])
def test_module_args_refuse_bolt_port_and_malformed_pairs(tmp_path: Path, args: str, fragment: str) -> None:
    with pytest.raises(ConfigError, match=fragment):
        EmbeddedServer(tmp_path / "db", falkor_args=args)
    assert not (tmp_path / "db").exists()  # refused before anything started


def test_configured_module_args_reach_the_server(tmp_path: Path) -> None:
    srv = EmbeddedServer(tmp_path / "db", falkor_args="CACHE_SIZE 7")
    try:
        info = srv.start()
        conn = redis.Redis(port=info.port)
        assert conn.execute_command("GRAPH.CONFIG", "GET", "CACHE_SIZE") == [b"CACHE_SIZE", 7]
        conn.close()
    finally:
        srv.stop()


def test_stop_then_start_keeps_data_via_aof(server: EmbeddedServer) -> None:
    lib = CypherLibrary(REPO_ROOT / "cypher", "falkordb")
    info = server.start()
    store = FalkorStore(lib, "127.0.0.1", info.port, "persist")
    store.run_batched("document_upsert", [{"id": "d1", "title": "Kept", "source": "k.txt", "props": {}}])
    store.run_batched("chunk_upsert", [{"id": "c1", "doc_id": "d1", "text": "survives a restart",
                                        "hash": "h", "source": "k.txt", "seq": 0}])
    store.close()
    assert server.stop() is True
    assert server.status() is None
    assert not (server.data_dir / STATE_FILE).exists()
    aof = server.data_dir / "appendonlydir"
    # stop compacted the AOF: the writes live in the snapshot base, the incremental file is empty,
    # so the next start loads a snapshot instead of replaying every statement
    assert [p.stat().st_size for p in aof.glob("*.incr.aof")] == [0]
    assert any(p.stat().st_size > 0 for p in aof.glob("*.base.rdb"))
    info2 = server.start()
    assert info2.pid != info.pid and info2.started_here is True
    store = FalkorStore(lib, "127.0.0.1", info2.port, "persist")
    try:
        rows = store.run("chunk_get_by_ids", {"ids": ["c1"]})
    finally:
        store.close()
    assert [(r["id"], r["text"], r["doc_id"]) for r in rows] == [("c1", "survives a restart", "d1")]


def test_stop_when_not_running_says_so(server: EmbeddedServer) -> None:
    assert server.status() is None
    assert server.stop() is False


def test_busy_port_gives_one_actionable_line(tmp_path: Path) -> None:
    with socket.socket() as blocker:
        blocker.bind(("127.0.0.1", 0))
        blocker.listen()
        port = blocker.getsockname()[1]
        srv = EmbeddedServer(tmp_path / "db", port=port)
        with pytest.raises(StoreUnavailable) as err:
            srv.start()
    message = str(err.value)
    assert "\n" not in message
    assert f"port {port} is busy" in message and "NEORAG_FALKOR_PORT" in message
    assert srv.status() is None


def test_state_file_with_dead_pid_is_ignored(server: EmbeddedServer) -> None:
    dead = subprocess.Popen(["true"])
    dead.wait()
    server.data_dir.mkdir(parents=True)
    (server.data_dir / STATE_FILE).write_text(json.dumps({"pid": dead.pid, "port": free_port()}))
    assert server.status() is None
    info = server.start()
    assert info.started_here is True and info.pid != dead.pid
    assert json.loads((server.data_dir / STATE_FILE).read_text())["pid"] == info.pid


def test_garbled_state_file_is_ignored(server: EmbeddedServer) -> None:
    server.data_dir.mkdir(parents=True)
    (server.data_dir / STATE_FILE).write_text("{not json")
    assert server.status() is None
    assert server.start().started_here is True


def _neorag(*args: str, data_dir: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NEORAG_FALKOR_DATA_DIR": str(data_dir), "NEORAG_FALKOR_PORT": "0"}
    return subprocess.run([NEORAG, *args], capture_output=True, text=True, env=env, timeout=60, check=False)


def test_cli_db_start_status_stop(tmp_path: Path) -> None:
    data_dir = tmp_path / "cli-db"
    try:
        down = _neorag("db", "status", data_dir=data_dir)
        assert down.returncode == 1 and "not running" in down.stdout
        started = _neorag("db", "start", data_dir=data_dir)
        assert started.returncode == 0, started.stderr
        assert "FalkorDB started" in started.stdout
        state = json.loads((data_dir / STATE_FILE).read_text())
        assert f"pid {state['pid']}" in started.stdout
        again = _neorag("db", "start", data_dir=data_dir)
        assert again.returncode == 0 and "already running" in again.stdout
        assert f"pid {state['pid']}" in again.stdout
        up = _neorag("db", "status", data_dir=data_dir)
        assert up.returncode == 0 and f"127.0.0.1:{state['port']}" in up.stdout
        stopped = _neorag("db", "stop", data_dir=data_dir)
        assert stopped.returncode == 0 and "FalkorDB stopped" in stopped.stdout
        assert _neorag("db", "status", data_dir=data_dir).returncode == 1
        assert "was not running" in _neorag("db", "stop", data_dir=data_dir).stdout
    finally:
        EmbeddedServer(data_dir).stop()


def test_writes_made_during_a_running_rewrite_are_compacted_once_it_ends(server: EmbeddedServer) -> None:
    """A job that ends while the server's own rewrite runs: the writes made meanwhile stay in the AOF's
    tail (at 100k chunks a 136 MB tail took 99.6 s to replay after kill -9), so compact_if_grown waits for
    that rewrite on a thread and compacts once more."""
    from app.store.aof import aof_growth, compact_if_grown, rewriting

    info = server.start()
    conn = redis.Redis(host="127.0.0.1", port=info.port)
    lib = CypherLibrary(REPO_ROOT / "cypher", "falkordb")
    store = FalkorStore(lib, "127.0.0.1", info.port, "aof")
    try:
        store.run_batched("document_upsert", [{"id": f"a{i}", "title": "T" * 200, "source": f"{i}.txt",
                                               "props": {}} for i in range(100)])
        conn.config_set("rdb-key-save-delay", 1_500_000)  # the rewrite's child takes 1.5 s per key
        conn.bgrewriteaof()
        assert rewriting(conn)
        store.run_batched("document_upsert", [{"id": f"b{i}", "title": "T" * 200, "source": f"{i}.txt",
                                               "props": {}} for i in range(300)])
        assert compact_if_grown("127.0.0.1", info.port, 10_000) is False  # busy: checked again later
        conn.config_set("rdb-key-save-delay", 0)
        deadline = time.monotonic() + 60
        while (rewriting(conn) or aof_growth(conn) >= 10_000) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert aof_growth(conn) < 10_000  # the tail written during the first rewrite is in a snapshot now
    finally:
        conn.close()
        store.close()


def test_the_aof_is_rewritten_once_it_grew_and_survives_kill_9(server: EmbeddedServer) -> None:
    """Issue 25, item 5: crash recovery replays what the AOF appended since its last rewrite, so the server
    rewrites by size itself (a lower minimum than redis's 64 MB) and compact_if_grown rewrites after jobs;
    after kill -9 the store comes back with everything from the compacted snapshot."""
    from app.store.aof import aof_growth, compact_if_grown

    info = server.start()
    args = server.command(info.port)
    assert args[args.index("--auto-aof-rewrite-min-size") + 1] == "16mb"
    conn = redis.Redis(host="127.0.0.1", port=info.port)
    assert conn.config_get("auto-aof-rewrite-min-size")["auto-aof-rewrite-min-size"] == str(16 * 1024 * 1024)
    lib = CypherLibrary(REPO_ROOT / "cypher", "falkordb")
    store = FalkorStore(lib, "127.0.0.1", info.port, "aof")
    store.run_batched("document_upsert", [{"id": f"d{i}", "title": "T" * 200, "source": f"{i}.txt",
                                           "props": {}} for i in range(300)])
    grown = aof_growth(conn)
    assert grown > 10_000
    assert compact_if_grown("127.0.0.1", info.port, grown + 1) is False  # below the threshold: nothing
    rewrites = int(conn.info("persistence")["aof_rewrites"])
    assert compact_if_grown("127.0.0.1", info.port, 10_000) is True
    while True:  # wait for the background rewrite to finish (counted when it starts)
        state = conn.info("persistence")
        if int(state["aof_rewrites"]) > rewrites and not int(state["aof_rewrite_in_progress"]) \
                and not int(state["aof_rewrite_scheduled"]):
            break
        time.sleep(0.05)
    assert aof_growth(conn) < 10_000  # the writes now live in the snapshot base
    assert compact_if_grown("127.0.0.1", info.port + 1 if info.port < 65535 else 1, 1) is False  # no server
    conn.close()
    store.close()
    os.kill(info.pid, 9)
    server.status()  # the dead pid is noticed
    again = server.start()
    store = FalkorStore(lib, "127.0.0.1", again.port, "aof")
    try:
        assert store._execute("MATCH (d:Document) RETURN count(d) AS n", {}, False)[0]["n"] == 300
    finally:
        store.close()
