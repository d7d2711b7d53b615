"""The local model server process: llama.cpp's OpenAI-compatible server (PyPI ``xllamacpp``) on one GGUF file.

Run in the foreground by ``neorag llm serve``, or as the child that ``NEORAG_LLM_BASE_URL=local`` starts
(``python -m app.services.local_llm_server ... --parent-pid N``). Once it listens it prints one JSON line
``{"event": "ready", "address": "http://127.0.0.1:PORT", ...}`` on stdout. It stops on SIGTERM/SIGINT. As a
child it gets SIGKILL when its supervising thread ends (``PR_SET_PDEATHSIG``, app/core/child.py) and, as a
second guard, stops when its parent is gone (the parent pid is polled twice a second), so it never outlives
the NeoRAG process that started it.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from app.core.errors import ConfigError


@dataclass
class ServeConfig:
    """What one server runs: the model, per-slot context, slots, CPU threads and the address."""

    model: Path
    ctx: int = 4096
    parallel: int = 2
    threads: int = 1
    host: str = "127.0.0.1"
    port: int = 0

    def args(self) -> list[str]:
        """The command-line arguments of this module for this config."""
        return ["--model", str(self.model), "--ctx", str(self.ctx), "--parallel", str(self.parallel),
                "--threads", str(self.threads), "--host", self.host, "--port", str(self.port)]


def start_server(cfg: ServeConfig) -> tuple[object, str]:
    """Start llama.cpp's server in this process; returns (server object, ``http://host:port``)."""
    try:
        import xllamacpp as xlc
    except ImportError as exc:
        raise ConfigError("the local LLM needs the xllamacpp package", "it is not installed",
                          "pip install xllamacpp (scripts/setup.sh does)") from exc
    if not cfg.model.is_file():
        raise ConfigError(f"model file {cfg.model} not found", "NEORAG_LLM_MODEL_PATH names no file",
                          "point NEORAG_LLM_MODEL_PATH at a .gguf file")
    params = xlc.CommonParams()
    params.model.path = str(cfg.model)
    params.n_parallel = cfg.parallel
    params.n_ctx = cfg.ctx * cfg.parallel  # llama.cpp splits n_ctx between the slots
    params.cpuparams.n_threads = cfg.threads
    params.cpuparams_batch.n_threads = cfg.threads
    params.hostnames = [cfg.host]
    params.port = cfg.port
    params.verbosity = 0
    params.endpoint_metrics = True
    server = xlc.Server(params)
    return server, str(server.listening_address).rstrip("/")


def ready_line(cfg: ServeConfig, address: str) -> str:
    """The JSON line a supervisor waits for."""
    return json.dumps({"event": "ready", "address": address, "pid": os.getpid(), "model": str(cfg.model),
                       "ctx": cfg.ctx, "parallel": cfg.parallel, "threads": cfg.threads})


def serve_forever(cfg: ServeConfig, parent_pid: int | None = None,
                  announce: Callable[[str], None] | None = None) -> int:
    """Serve until SIGTERM/SIGINT (or the parent's exit); ``announce(address)`` (default: the ready line)."""
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    server, address = start_server(cfg)
    if announce is None:
        print(ready_line(cfg, address), flush=True)
    else:
        announce(address)
    while not stop.wait(0.5):
        if parent_pid is not None and os.getppid() != parent_pid:
            break  # the parent died: nobody supervises us any more
    del server  # stops llama.cpp's server loop
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model", type=Path, required=True)
    parser.add_argument("--ctx", type=int, default=4096)
    parser.add_argument("--parallel", type=int, default=2)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--parent-pid", type=int, default=None)
    a = parser.parse_args(argv)
    cfg = ServeConfig(a.model, a.ctx, a.parallel, a.threads, a.host, a.port)
    try:
        return serve_forever(cfg, a.parent_pid)
    except ConfigError as exc:
        print(json.dumps({"event": "error", "error": str(exc)}), flush=True)
        return 2


if __name__ == "__main__":
    sys.exit(main())
