"""The local model server as processes: the bundled GGUF, `neorag llm serve`, start failures, and the child
dying with its parent. Settings for custom types and the model path fail with one actionable line."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from app.commands.common import load_settings
from app.core.config import Settings
from app.core.errors import ConfigError, LLMUnavailable
from app.services.local_llm import LocalLLM, bundled_model, resolve_model
from app.services.local_llm_server import ServeConfig
from app.store.embedded import free_port
from tests.support.local_llm import LocalModel

ROOT = Path(__file__).resolve().parents[1]
NEORAG = str(Path(sys.executable).with_name("neorag"))


def test_the_wheel_ships_the_gguf_weights() -> None:
    path = bundled_model()
    assert path is not None and path.name == "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert path.stat().st_size > 90 * 2**20
    with open(path, "rb") as fh:
        assert fh.read(4) == b"GGUF"
    assert resolve_model(Settings()) == path


def test_model_path_and_type_settings_fail_with_one_line(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="NEORAG_LLM_MODEL_PATH .* is not a file"):
        resolve_model(Settings(llm_model_path=tmp_path / "missing.gguf"))
    s = load_settings(ingest_relation_types="works for, Part-Of", ingest_entity_types='["person", "place"]')
    assert s.ingest_relation_types == ["WORKS_FOR", "PART_OF"]
    assert s.ingest_entity_types == ["PERSON", "PLACE"]
    with pytest.raises(ConfigError) as err:
        load_settings(ingest_relation_types='["OK", "x]->(y) DETACH DELETE y //"]')
    assert "NEORAG_INGEST_RELATION_TYPES" in str(err.value) and "\n" not in str(err.value)


def test_a_file_that_is_no_model_fails_to_start_with_the_log_tail(tmp_path: Path) -> None:
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"not a model" * 100)
    server = LocalLLM(ServeConfig(bad, ctx=256, parallel=1, threads=1), tmp_path / "llm.log")
    with pytest.raises(LLMUnavailable) as err:
        server.start(wait_s=60, measure=False)
    assert "did not start" in str(err.value) and not server.alive()


@pytest.mark.llm
def test_neorag_llm_serve_in_the_foreground() -> None:
    port = free_port()
    proc = subprocess.Popen([NEORAG, "llm", "serve", "--port", str(port), "--parallel", "1", "--ctx", "512"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT, text=True)
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        assert f"127.0.0.1:{port}/v1" in line and "SmolLM2" in line, line
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=10) as resp:
            assert json.loads(resp.read())["status"] == "ok"
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0


@pytest.mark.llm
def test_the_child_dies_with_its_parent(tmp_path: Path) -> None:
    script = ("import time; from app.core.config import Settings; from app.services.local_llm import acquire;"
              f"s = acquire(Settings(llm_base_url='local', llm_parallel=1, llm_local_ctx=512, "
              f"falkor_data_dir={str(tmp_path / 'db')!r})); print(s.pid, flush=True); time.sleep(120)")
    parent = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, cwd=ROOT, text=True,
                              env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert parent.stdout is not None
    child = int(parent.stdout.readline())
    os.kill(child, 0)  # alive
    parent.kill()  # SIGKILL: no atexit, no cleanup in the parent
    parent.wait(timeout=10)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and _alive(child):
        time.sleep(0.2)
    assert not _alive(child)


@pytest.mark.llm
def test_the_child_is_tied_to_the_supervising_thread(tmp_path: Path) -> None:
    """One supervisor (app/core/child.py) starts the server from its own thread with PR_SET_PDEATHSIG: when
    that thread ends without stopping the child (the parent process still alive, so the child's own
    parent-pid check does not fire), the child gets SIGKILL."""
    model = bundled_model()
    assert model is not None
    server = LocalLLM(ServeConfig(model, ctx=256, parallel=1, threads=1), tmp_path / "llm.log")
    server.start(wait_s=120, measure=False)
    sup = server.supervisor
    assert sup is not None and sup.child is not None and server.alive()
    assert server.supervision() == {"state": "running", "restarts": 0, "last_error": None}
    info = server.info()
    child = sup.child
    assert (info["state"], info["restarts"], info["last_error"]) == ("running", 0, None)
    assert info["pid"] == child.pid
    sup.close()  # no stop_child: only the thread ends
    assert child.wait(timeout=30) == -signal.SIGKILL
    assert not server.alive() and server.supervision()["state"] == "stopped"
    server.stop()  # after close: nothing left to stop, no error


class _Listener:
    def __init__(self) -> None:
        self.urls: list[str] = []

    def moved(self, base_url: str) -> None:
        self.urls.append(base_url)


@pytest.mark.llm
def test_a_restart_on_another_port_tells_the_listeners(tmp_path: Path) -> None:
    """The supervisor's restart hook: when the old port is taken, the server restarts on a free one and the
    clients (``on_address_change``) get the new base URL."""
    model = bundled_model()
    assert model is not None
    server = LocalLLM(ServeConfig(model, ctx=256, parallel=1, threads=1), tmp_path / "llm.log")
    server.start(wait_s=120, measure=False)
    listener = _Listener()
    server.on_address_change(listener.moved)
    old_url = server.base_url
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        server.cfg.port = taken.getsockname()[1]  # the port the restart tries first is busy
        try:
            server.kill_for_test()
            deadline = time.monotonic() + 120
            while server.restarts < 1 and time.monotonic() < deadline:
                time.sleep(0.2)
            assert server.restarts == 1 and server.alive() and server.healthy()
            assert server.base_url != old_url and listener.urls == [server.base_url]
            assert server.supervision()["state"] == "running"
        finally:
            server.stop()
    assert not server.alive() and server.supervision()["state"] == "stopped"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    try:
        return "State:\tZ" not in Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False


@pytest.mark.llm
def test_serve_workers_share_one_local_model(local_llm: LocalModel, settings: Settings) -> None:
    from app.services.llm import LLMClient
    from app.services.local_llm import release, share_with_workers

    assert share_with_workers(settings.model_copy(update={"llm_base_url": "http://x/v1"}), env := {}) is None
    assert env == {}
    shared = share_with_workers(local_llm.settings(settings), env)
    try:
        assert shared is local_llm.server  # the session's server, not a second model process
        assert env["NEORAG_LLM_BASE_URL"] == local_llm.server.base_url
        worker = Settings(llm_base_url=env["NEORAG_LLM_BASE_URL"], llm_model=env["NEORAG_LLM_MODEL"],
                          llm_timeout_s=float(env["NEORAG_LLM_TIMEOUT_S"]), llm_max_retries=0)
        client = LLMClient.from_settings(worker)
        assert client is not None
        assert client.chat([{"role": "user", "content": "Say yes."}], max_tokens=4).text.strip()
    finally:
        if shared is not None:
            release(shared)
