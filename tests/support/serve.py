"""A real `neorag serve` in a subprocess, on a free port, with its own data dir."""

from __future__ import annotations

import http.client
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

from app.store.embedded import free_port

NEORAG = str(Path(sys.executable).parent / "neorag")


@dataclass
class Served:
    """A running server: its process, base URL and data dir."""

    proc: subprocess.Popen[bytes]
    url: str
    data_dir: Path
    log: Path


def wait_health(url: str, timeout_s: float, proc: subprocess.Popen[bytes] | None = None) -> httpx.Response:
    """Poll GET /health until 200 (or the timeout); the last answer."""
    deadline = time.monotonic() + timeout_s
    last: httpx.Response | None = None
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"neorag serve exited with {proc.returncode}")
        try:
            last = httpx.get(url + "/health", timeout=5)
            if last.status_code == 200:
                return last
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise TimeoutError(f"{url}/health not ok after {timeout_s} s (last: {last and last.text})")


def idle_connection_survives(url: str, idle_s: float) -> bool:
    """Whether one keep-alive connection still answers a request after being idle for ``idle_s``."""
    host, port = url.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=30)
    try:
        conn.request("GET", "/health")
        first = conn.getresponse()
        first.read()
        assert first.status == 200 and not first.will_close
        time.sleep(idle_s)
        conn.request("GET", "/health")
        return conn.getresponse().status == 200
    except (http.client.RemoteDisconnected, ConnectionError):
        return False
    finally:
        conn.close()


@contextmanager
def served(tmp_path: Path, *, roots: list[Path] | None = None, workers: int = 1,
           env: dict[str, str] | None = None, data_dir: Path | None = None) -> Iterator[Served]:
    """Start `neorag serve` (embedded store under ``data_dir``), wait until healthy, stop it afterwards."""
    data_dir = data_dir or tmp_path / ".neorag"
    port = free_port()
    log = tmp_path / f"serve-{port}.log"
    full_env = {**os.environ, "NEORAG_DATA_DIR": str(data_dir), "NEORAG_FALKOR_PORT": "0",
                "NEORAG_API_PORT": str(port), "NEORAG_API_HOST": "127.0.0.1",
                "NEORAG_INGEST_ROOTS": "[" + ",".join(f'"{r}"' for r in roots or []) + "]",
                "NEORAG_EMBEDDING_QUERY_WARM_WORDS": "0", **(env or {})}
    full_env.pop("NEORAG_LLM_BASE_URL", None)
    with open(log, "wb") as out:
        proc = subprocess.Popen([NEORAG, "serve", "--workers", str(workers)], env=full_env, stdout=out,
                                stderr=subprocess.STDOUT, cwd=tmp_path)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_health(url, 180, proc)
        yield Served(proc, url, data_dir, log)
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
