"""``neorag neo4j install | start | stop | status``: the real commands, their one-line errors, and a restart
of the session's Neo4j that keeps its data."""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from app.core.config import Settings
from app.core.errors import ConfigError, StoreUnavailable
from app.store.embedded import free_port
from app.store.neo4j_runtime import NEO4J_VERSION, Neo4jRuntime
from app.store.neo4j_server import STATE_FILE, Neo4jInfo, Neo4jServer
from tests.conftest import TEST_NEO4J_HEAP, TEST_NEO4J_PAGECACHE
from tests.support.backends import NEO4J_TEST_PASSWORD, Backend
from tests.support.ingest_graph import q

NEORAG = str(Path(sys.executable).parent / "neorag")


def neorag(*args: str, timeout: float = 300, **env: str) -> subprocess.CompletedProcess[str]:
    """The CLI with only the given NEORAG_* variables."""
    base = {k: v for k, v in os.environ.items() if not k.startswith("NEORAG_")}
    return subprocess.run([NEORAG, *args], env={**base, **env}, capture_output=True, text=True,
                          timeout=timeout, check=False)


def error_line(proc: subprocess.CompletedProcess[str]) -> str:
    """The one error line the CLI printed (no traceback)."""
    assert proc.returncode == 2, proc.stdout + proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in proc.stderr, lines
    return lines[0]


@pytest.fixture
def busy_port() -> Iterator[int]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield sock.getsockname()[1]


def restart(info: Neo4jInfo) -> subprocess.CompletedProcess[str]:
    """``neorag neo4j start`` of the session's Neo4j again (same data dir, ports, password and memory)."""
    return neorag("neo4j", "start", "--data-dir", str(info.data_dir), "--bolt-port", str(info.bolt_port),
                  "--http-port", str(info.http_port), "--password", NEO4J_TEST_PASSWORD,
                  NEORAG_NEO4J_HEAP=TEST_NEO4J_HEAP, NEORAG_NEO4J_PAGECACHE=TEST_NEO4J_PAGECACHE)


def fake_java(tmp_path: Path, version: str) -> Path:
    """A ``java`` that only answers ``-version`` like that release does."""
    path = tmp_path / "java"
    path.write_text(f"#!/bin/sh\necho 'openjdk version \"{version}\" 2024-01-01' >&2\n")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return path


# --- one-line errors, before any JVM starts -----------------------------------------------------

def test_short_password_is_refused(tmp_path: Path) -> None:
    line = error_line(neorag("neo4j", "start", "--data-dir", str(tmp_path / "db"), "--password", "short",
                             "--bolt-port", str(free_port()), "--http-port", str(free_port())))
    assert "password is too short" in line and "8 characters" in line
    assert not (tmp_path / "db" / STATE_FILE).exists()


def test_taken_port_is_named(tmp_path: Path, busy_port: int) -> None:
    line = error_line(neorag("neo4j", "start", "--data-dir", str(tmp_path / "db"),
                             "--bolt-port", str(busy_port), "--http-port", str(free_port())))
    assert f"Bolt port 127.0.0.1:{busy_port} is taken" in line and "--bolt-port" in line


def test_data_dir_of_another_version_is_refused(tmp_path: Path) -> None:
    (tmp_path / "db").mkdir()
    (tmp_path / "db" / STATE_FILE).write_text(json.dumps({"pid": None, "version": "5.20.0"}))
    line = error_line(neorag("neo4j", "start", "--data-dir", str(tmp_path / "db"),
                             "--bolt-port", str(free_port()), "--http-port", str(free_port())))
    assert "made by Neo4j 5.20.0" in line and NEO4J_VERSION in line and "fresh --data-dir" in line


def test_missing_or_wrong_java_is_one_line(tmp_path: Path) -> None:
    common = ["neo4j", "start", "--data-dir", str(tmp_path / "db"), "--bolt-port", str(free_port()),
              "--http-port", str(free_port())]
    line = error_line(neorag(*common, NEORAG_NEO4J_JAVA=str(tmp_path / "no-java")))
    assert "cannot run" in line and "openjdk-17-jdk-headless" in line
    line = error_line(neorag(*common, NEORAG_NEO4J_JAVA=str(fake_java(tmp_path, "11.0.2"))))
    assert "is Java 11" in line and "Java 17 or 21" in line


def test_missing_java_and_maven_name_the_packages(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # neither java nor mvn on it
    monkeypatch.delenv("JAVA_HOME", raising=False)
    runtime = Neo4jRuntime(tmp_path / "cache")
    with pytest.raises(ConfigError, match="Java is not installed.*openjdk-17-jdk-headless"):
        runtime.java()
    with pytest.raises(ConfigError, match="Maven is not installed.*apt-get install .*maven"):
        runtime.ensure(java=str(fake_java(tmp_path, "17.0.15")))


def test_status_and_stop_when_not_running(tmp_path: Path) -> None:
    status = neorag("neo4j", "status", "--data-dir", str(tmp_path / "db"))
    assert status.returncode == 1 and "not running" in status.stdout
    stop = neorag("neo4j", "stop", "--data-dir", str(tmp_path / "db"))
    assert stop.returncode == 0 and "was not running" in stop.stdout


def test_config_binds_loopback_and_apoc_is_a_flag(tmp_path: Path) -> None:
    plain = Neo4jServer(tmp_path, Neo4jRuntime(tmp_path / "c"), bolt_port=7001, http_port=7002, heap="512m")
    text = plain.config_text()
    assert "server.bolt.listen_address=127.0.0.1:7001" in text
    assert "server.http.listen_address=127.0.0.1:7002" in text and "apoc" not in text
    assert {"-Xms512m", "-Xmx512m"} <= set(plain.jvm_args())
    apoc = Neo4jServer(tmp_path, Neo4jRuntime(tmp_path / "c", apoc=True))
    assert "dbms.security.procedures.unrestricted=apoc.*" in apoc.config_text()
    assert str(tmp_path / "c" / f"neo4j-{NEO4J_VERSION}" / "plugins") in apoc.runtime.classpath()


def test_config_bounds_transaction_logs_and_the_bolt_shutdown_wait(tmp_path: Path) -> None:
    text = Neo4jServer(tmp_path, Neo4jRuntime(tmp_path / "c")).config_text()
    assert "db.tx_log.rotation.retention_policy=128M size" in text  # not Neo4j's "2 days" of logs
    assert "db.tx_log.rotation.size=64M" in text and "db.checkpoint.interval.tx=200" in text
    assert "internal.server.bolt.thread_pool_shutdown_wait_time=1s" in text
    assert "db.store.files.preallocate=false" in text  # store files hold data, not 32 MiB reservations


def test_start_maps_the_archive_of_its_own_java_only(tmp_path: Path) -> None:
    """The class-data-sharing archive is per Java binary (an archive maps only into the JVM that wrote it)
    and used only when it exists and the server was not told otherwise."""
    runtime = Neo4jRuntime(tmp_path / "c")
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    java_a, java_b = fake_java(tmp_path / "a", "17.0.15"), fake_java(tmp_path / "b", "21.0.2")
    archive = runtime.cds_archive(str(java_a))
    assert archive != runtime.cds_archive(str(java_b)) and archive.parent == runtime.home / "cds"
    server = Neo4jServer(tmp_path, runtime)
    assert not any("SharedArchiveFile" in a for a in server.jvm_args(str(java_a)))  # none built yet
    archive.parent.mkdir(parents=True)
    archive.write_bytes(b"archive")
    assert f"-XX:SharedArchiveFile={archive}" in server.jvm_args(str(java_a))
    assert not any("SharedArchiveFile" in a for a in server.jvm_args(str(java_b)))
    assert not any("SharedArchiveFile" in a for a in Neo4jServer(tmp_path, runtime, use_cds=False)
                   .jvm_args(str(java_a)))
    assert runtime.classpath().endswith("neorag-launcher.jar")  # CDS takes jars only, no class folder
    jar = runtime.launcher / "neorag-launcher.jar"
    jar.parent.mkdir(parents=True)
    jar.write_bytes(b"one")
    before = runtime.cds_archive(str(java_a))
    jar.write_bytes(b"other")  # a rebuilt launcher: the JVM would refuse the old archive ("failed to load")
    assert runtime.cds_archive(str(java_a)) != before


# --- the session's real Neo4j ----------------------------------------------------------------------

@pytest.mark.backends("neo4j")
def test_a_start_and_a_restart_map_the_archive_built_at_install(backend: Backend, tmp_path: Path) -> None:
    """`neorag neo4j install` (scripts/test-tools.sh) built the archive; a server started on a fresh data
    dir, and started again on the same one, has it mapped (its own server: the session's is restarted by
    other tests)."""
    settings = Settings()
    runtime = Neo4jRuntime(settings.neo4j_cache_dir, java=settings.neo4j_java)
    archive = runtime.cds_archive(runtime.java())
    assert archive.exists(), "run `neorag neo4j install` (scripts/test-tools.sh does) to build it"
    server = Neo4jServer(tmp_path / "db", runtime, bolt_port=free_port(), http_port=free_port(),
                         password=NEO4J_TEST_PASSWORD, heap=TEST_NEO4J_HEAP, pagecache=TEST_NEO4J_PAGECACHE)
    try:
        for _ in ("fresh", "again"):
            info = server.start(timeout_s=300)
            assert str(archive) in Path(f"/proc/{info.pid}/maps").read_text()
            server.stop()
    finally:
        server.stop()


@pytest.mark.backends("neo4j")
def test_status_and_browser_of_the_running_server(backend: Backend, neo4j_server: Neo4jInfo) -> None:
    status = neorag("neo4j", "status", "--data-dir", str(neo4j_server.data_dir))
    assert status.returncode == 0, status.stdout + status.stderr
    assert f"Neo4j {NEO4J_VERSION}" in status.stdout and neo4j_server.uri in status.stdout
    assert neo4j_server.browser_url in status.stdout
    discovery = httpx.get(f"http://127.0.0.1:{neo4j_server.http_port}/", timeout=10).json()
    assert discovery["neo4j_edition"] == "community" and discovery["neo4j_version"] == NEO4J_VERSION
    assert discovery["bolt_direct"] == neo4j_server.uri
    browser = httpx.get(neo4j_server.browser_url, timeout=10)
    assert browser.status_code == 200 and "<html" in browser.text.lower()


@pytest.mark.backends("neo4j")
def test_second_start_on_a_taken_data_dir_reuses_the_server(neo4j_server: Neo4jInfo) -> None:
    again = neorag("neo4j", "start", "--data-dir", str(neo4j_server.data_dir),
                   "--password", NEO4J_TEST_PASSWORD)
    assert again.returncode == 0 and "already running" in again.stdout and neo4j_server.uri in again.stdout


@pytest.mark.backends("neo4j")
def test_stop_then_start_keeps_the_data(backend: Backend, neo4j_server: Neo4jInfo, graph_name: str) -> None:
    backend.claim(graph_name)
    store = backend.open_store(backend.settings(graph_name))
    try:
        store._execute("CREATE (:Survivor {name: 'kept'})", {}, True)
        stop = neorag("neo4j", "stop", "--data-dir", str(neo4j_server.data_dir))
        assert stop.returncode == 0 and "Neo4j stopped" in stop.stdout
        assert not store.health().reachable
        with pytest.raises(StoreUnavailable):
            store.run("ping")
        start = restart(neo4j_server)
        assert start.returncode == 0, start.stdout + start.stderr
        assert "started in" in start.stdout and f"Browser  {neo4j_server.browser_url}" in start.stdout
        assert q(store, "MATCH (s:Survivor) RETURN s.name AS name") == [{"name": "kept"}]
    finally:
        backend.drop(graph_name)
        store.close()
