"""Starts, reuses and stops a local Neo4j Community server without Docker (``neorag neo4j``).

One server per data directory: ``DIR/data`` (the databases), ``DIR/logs`` (Neo4j's logs and
``launcher.log``), ``DIR/neo4j.conf`` (written at every start) and ``DIR/neorag-neo4j.json`` (pid,
ports, and the Neo4j version that made the directory). The jars come from :mod:`app.store.neo4j_runtime`.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from app.core.errors import ConfigError, StoreUnavailable
from app.store.embedded import _pid_alive as pid_alive
from app.store.embedded import port_busy
from app.store.neo4j_runtime import Neo4jRuntime

if TYPE_CHECKING:
    from app.core.config import Settings

log = logging.getLogger(__name__)

STATE_FILE = "neorag-neo4j.json"
CONF_FILE = "neo4j.conf"
LAUNCHER_LOG = "launcher.log"
READY_LINE = "NEORAG_NEO4J_READY"
MIN_PASSWORD = 8  # Neo4j's dbms.security.auth_minimum_password_length
USER = "neo4j"
# What Neo4j's own start script passes to the JVM (5.26 conf), minus the memory sizes we set ourselves.
JVM_FLAGS = (
    "-XX:+UseG1GC", "-XX:-OmitStackTraceInFastThrow", "-XX:+UnlockExperimentalVMOptions",
    "-XX:+TrustFinalNonStaticFields", "-XX:+DisableExplicitGC", "-XX:+ExitOnOutOfMemoryError",
    "-Djdk.nio.maxCachedBufferSize=1024", "-Dio.netty.tryReflectionSetAccessible=true",
    "-Dlog4j2.disable.jmx=true", "-Dfile.encoding=UTF-8",
    "--add-opens=java.base/java.nio=ALL-UNNAMED", "--add-opens=java.base/java.io=ALL-UNNAMED",
    "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED", "--add-opens=java.base/java.lang=ALL-UNNAMED",
)


@dataclass
class Neo4jInfo:
    """A running local Neo4j."""

    pid: int
    host: str
    bolt_port: int
    http_port: int
    version: str
    data_dir: Path
    started_here: bool
    start_seconds: float | None = None

    @property
    def uri(self) -> str:
        return f"bolt://{self.host}:{self.bolt_port}"

    @property
    def browser_url(self) -> str:
        return f"http://{self.host}:{self.http_port}/browser/"


class Neo4jServer:
    """Manages the Neo4j of one data directory (see the module docstring)."""

    def __init__(self, data_dir: Path, runtime: Neo4jRuntime, bolt_port: int = 7687, http_port: int = 7474,
                 password: str = "neorag-password", heap: str = "1g", pagecache: str = "512m",
                 host: str = "127.0.0.1", jvm_flags: tuple[str, ...] = (), use_cds: bool = True) -> None:
        self.data_dir = Path(data_dir).expanduser().resolve()
        self.runtime = runtime
        self.bolt_port, self.http_port, self.host = bolt_port, http_port, host
        self.password, self.heap, self.pagecache = password, heap, pagecache
        self.jvm_flags = jvm_flags  # e.g. tests: -XX:TieredStopAtLevel=1 (half the start-up CPU)
        self.use_cds = use_cds  # map the class-data-sharing archive when `neorag neo4j install` built one

    @property
    def state_path(self) -> Path:
        return self.data_dir / STATE_FILE

    def _state(self) -> dict[str, object]:
        try:
            state = json.loads(self.state_path.read_text())
            return state if isinstance(state, dict) else {}
        except (OSError, ValueError):
            return {}

    def _write_state(self, **values: object) -> None:
        state = {**self._state(), **values}
        self.state_path.write_text(json.dumps(state, indent=1))

    def status(self) -> Neo4jInfo | None:
        """The server running for this data dir (its process alive and Bolt listening), or None."""
        state = self._state()
        pid = int(str(state.get("pid") or 0))
        bolt, http = int(str(state.get("bolt_port") or 0)), int(str(state.get("http_port") or 0))
        host = str(state.get("host") or self.host)
        if pid and pid_alive(pid) and bolt and port_busy(host, bolt):
            return Neo4jInfo(pid, host, bolt, http, str(state.get("version")), self.data_dir, False)
        return None

    def record_version(self) -> None:
        """Note that this Neo4j version made (or now owns) the data dir."""
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self._write_state(version=self.runtime.version)

    def check_version(self) -> None:
        """Refuse a data dir that another Neo4j version made (its store files may not open, or would be
        upgraded irreversibly)."""
        made_by = self._state().get("version")
        if made_by and made_by != self.runtime.version:
            raise ConfigError(f"{self.data_dir} was made by Neo4j {made_by}",
                              f"this NeoRAG runs Neo4j {self.runtime.version}",
                              "use a fresh --data-dir (or dump and load the database with that version's "
                              "neo4j-admin)")

    def start(self, timeout_s: float = 180.0) -> Neo4jInfo:
        """Start the server (or reuse the running one); returns once Bolt accepts a login."""
        running = self.status()
        if running:
            return running
        if len(self.password) < MIN_PASSWORD:
            raise ConfigError("the Neo4j password is too short",
                              f"Neo4j needs at least {MIN_PASSWORD} characters",
                              "pass --password or set NEORAG_NEO4J_PASSWORD to 8+ characters")
        self.check_version()
        for name, port in (("Bolt", self.bolt_port), ("HTTP", self.http_port)):
            if port_busy(self.host, port):
                flag = "--bolt-port" if name == "Bolt" else "--http-port"
                raise StoreUnavailable(f"the {name} port {self.host}:{port} is taken",
                                       "another process (another Neo4j?) listens there",
                                       f"stop it, or pass {flag} with a free port")
        java, conf = self.prepare()
        launcher_log = self.data_dir / "logs" / LAUNCHER_LOG
        started = time.monotonic()
        with launcher_log.open("wb") as out:
            proc = subprocess.Popen(
                [java, *self.jvm_args(java), "-cp", self.runtime.classpath(), "NeoragNeo4j",
                 str(self.data_dir), str(conf)],
                stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True,
                env={**os.environ, "NEORAG_NEO4J_INITIAL_PASSWORD": self.password},
            )
        self._write_state(pid=proc.pid, host=self.host, bolt_port=self.bolt_port, http_port=self.http_port,
                          version=self.runtime.version)
        try:
            self._wait_ready(proc, launcher_log, timeout_s)
        except BaseException:
            _terminate(proc.pid, 30.0)
            self._write_state(pid=None)
            raise
        return Neo4jInfo(proc.pid, self.host, self.bolt_port, self.http_port, self.runtime.version,
                         self.data_dir, True, round(time.monotonic() - started, 1))

    def prepare(self) -> tuple[str, Path]:
        """Check Java, resolve the jars, make the data dir and write its neo4j.conf (before the server or
        Neo4j's admin tool runs on it); returns the java binary and the conf file."""
        java = self.runtime.java()
        self.runtime.ensure(java)
        (self.data_dir / "logs").mkdir(parents=True, exist_ok=True)
        conf = self.data_dir / CONF_FILE
        conf.write_text(self.config_text(), encoding="utf-8")
        return java, conf

    def jvm_args(self, java: str | None = None) -> list[str]:
        """Heap and JVM flags (small heaps suit tests; see NEORAG_NEO4J_HEAP), and the class-data-sharing
        archive of ``java`` when one was built (:mod:`app.store.neo4j_cds`)."""
        args = [f"-Xms{self.heap}", f"-Xmx{self.heap}", *JVM_FLAGS, *self.jvm_flags]
        if java and self.use_cds:
            archive = self.runtime.cds_archive(java)
            if archive.exists():
                args += ["-Xshare:auto", f"-XX:SharedArchiveFile={archive}"]
        return args

    def config_text(self) -> str:
        """neo4j.conf: loopback listeners on the chosen ports, page cache, logs under the data dir."""
        bolt, http = f"{self.host}:{self.bolt_port}", f"{self.host}:{self.http_port}"
        lines = [
            "# Written by `neorag neo4j start` at every start; edit the NEORAG_NEO4J_* settings instead.",
            f"server.default_listen_address={self.host}",
            f"server.default_advertised_address={self.host}",
            "server.bolt.enabled=true",
            f"server.bolt.listen_address={bolt}",
            f"server.bolt.advertised_address={bolt}",
            "server.http.enabled=true",
            f"server.http.listen_address={http}",
            f"server.http.advertised_address={http}",
            "server.https.enabled=false",
            f"server.memory.pagecache.size={self.pagecache}",
            f"server.directories.logs={self.data_dir / 'logs'}",
            "dbms.security.auth_enabled=true",
            "dbms.usage_report.enabled=false",
            # Bounded transaction logs: 64 MB files, at most ~128 MB kept after a checkpoint, and a
            # checkpoint (which prunes them) every 200 transactions or 5 minutes (Neo4j's 100,000 / 15 min
            # let a KG load of 5,000-row transactions pile up ~870 bytes of log per triple; Community has no
            # volume-based checkpoints).
            "db.tx_log.rotation.size=64M",
            "db.tx_log.rotation.retention_policy=128M size",
            "db.checkpoint.interval.tx=200",
            "db.checkpoint.interval.time=5m",
            # Store files grow with their data, not ahead of it: Neo4j's default fallocates a store file
            # 32 MiB (and ~10% of its size) at a time, which left a 3M-triple KG load ~16% of its store
            # files unused (docs/BENCHMARKS.md, issue 23, "Fourth session").
            "db.store.files.preallocate=false",
            # A stopping Bolt server waits this long for its worker threads (default 5 s of every stop; an
            # internal setting of 5.26).
            "internal.server.bolt.thread_pool_shutdown_wait_time=1s",
        ]
        if self.runtime.apoc:
            lines += [f"server.directories.plugins={self.runtime.plugins}",
                      "dbms.security.procedures.unrestricted=apoc.*"]
        return "\n".join(lines) + "\n"

    def _wait_ready(self, proc: subprocess.Popen[bytes], launcher_log: Path, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        ready = False
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise StoreUnavailable(f"Neo4j exited at start (code {proc.returncode})",
                                       self._failure_reason(launcher_log),
                                       f"see {launcher_log} and {self.data_dir / 'logs' / 'debug.log'}")
            ready = ready or READY_LINE in launcher_log.read_text(errors="replace")
            if ready and self._login_ok():
                return
            time.sleep(0.25)
        raise StoreUnavailable("Neo4j did not accept a login in time", f"waited {timeout_s:.0f}s",
                               f"see {self.data_dir / 'logs' / 'debug.log'}")

    def _login_ok(self) -> bool:
        from neo4j import GraphDatabase
        from neo4j.exceptions import Neo4jError, ServiceUnavailable

        driver = GraphDatabase.driver(f"bolt://{self.host}:{self.bolt_port}", auth=(USER, self.password),
                                      connection_timeout=2.0)
        try:
            driver.verify_connectivity()
            return True
        except (ServiceUnavailable, Neo4jError, OSError):
            return False
        finally:
            driver.close()

    def _failure_reason(self, launcher_log: Path) -> str:
        text = launcher_log.read_text(errors="replace")
        for marker, reason in (("Address already in use", "a port is taken"),
                               ("UnsupportedClassVersionError", "the Java version is too old"),
                               ("Failed to start Neo4j", "the database did not start"),
                               ("NEORAG_NEO4J_PASSWORD_FAILED", "the password was refused")):
            if marker in text:
                line = next((ln for ln in text.splitlines() if marker in ln), marker)
                return f"{reason}: {line.strip()[:240]}"
        lines = [ln for ln in text.strip().splitlines() if ln.strip()]
        return " | ".join(lines[-3:])[:400] or "no output"

    def stop(self, timeout_s: float = 90.0) -> bool:
        """Shut the server down cleanly (SIGTERM: checkpoint, then exit); returns whether one ran."""
        state = self._state()
        pid = int(str(state.get("pid") or 0))
        if not pid or not pid_alive(pid):
            if state:
                self._write_state(pid=None)
            return False
        _terminate(pid, timeout_s)
        self._write_state(pid=None)
        return True


def _terminate(pid: int, timeout_s: float) -> None:
    """SIGTERM, wait, then SIGKILL if the process is still there."""
    try:
        os.kill(pid, signal.SIGTERM)
    except OSError:
        return
    deadline = time.monotonic() + timeout_s
    while pid_alive(pid) and time.monotonic() < deadline:
        _reap(pid)
        time.sleep(0.1)
    if pid_alive(pid):
        log.warning("Neo4j (pid %s) did not stop in %.0f s: killing it", pid, timeout_s)
        os.kill(pid, signal.SIGKILL)
    _reap(pid)


def _reap(pid: int) -> None:
    """Collect our own exited child (else it stays a zombie and looks alive)."""
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass


def uri_port(uri: str, default: int = 7687) -> int:
    """The port of a Bolt URI (``bolt://host:7687``), or ``default``."""
    from urllib.parse import urlsplit

    try:
        return urlsplit(uri).port or default
    except ValueError:
        return default


def server_from_settings(settings: Settings, data_dir: Path | None = None, bolt_port: int | None = None,
                         http_port: int | None = None, password: str | None = None,
                         apoc: bool | None = None) -> Neo4jServer:
    """The local Neo4j of the settings (NEORAG_NEO4J_*), with command-line overrides."""
    runtime = Neo4jRuntime(settings.neo4j_cache_dir, settings.neo4j_apoc if apoc is None else apoc,
                           settings.neo4j_java)
    return Neo4jServer(
        data_dir or settings.neo4j_data_dir, runtime,
        bolt_port=bolt_port or uri_port(settings.neo4j_uri), http_port=http_port or settings.neo4j_http_port,
        password=settings.neo4j_password if password is None else password,
        heap=settings.neo4j_heap, pagecache=settings.neo4j_pagecache,
    )
