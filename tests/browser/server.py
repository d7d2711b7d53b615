"""Run the real NeoRAG app with uvicorn on 127.0.0.1 in a background thread (for browser tests)."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import uvicorn
from fastapi import FastAPI

from app.api.main import create_app
from app.commands.workers import uvicorn_options
from app.core.config import Settings
from app.services.container import build_services


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class _Server(uvicorn.Server):
    """uvicorn.Server that remembers its event loop (to close connections from the test thread)."""

    loop: asyncio.AbstractEventLoop | None = None

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        self.loop = asyncio.get_running_loop()
        await super().startup(sockets)


@dataclass
class LiveServer:
    """A running app: ``url`` and a way to cut every open connection (a network drop)."""

    url: str
    server: _Server

    def drop_connections(self) -> int:
        """Close every open client connection's socket, as a dropped network would; returns how many."""
        loop = self.server.loop
        assert loop is not None
        conns = list(self.server.server_state.connections)
        for conn in conns:
            transport = getattr(conn, "transport", None)
            if transport is not None:
                loop.call_soon_threadsafe(transport.abort)
        return len(conns)


@contextmanager
def live_server(settings: Settings, timeout_s: float = 60.0,
                app: FastAPI | None = None) -> Iterator[LiveServer]:
    """Serve the app (services built on the already running store), or ``app`` when given."""
    app = app or create_app(settings, services_factory=lambda s: build_services(s, start_embedded=False))
    port = free_port()
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on",
                            http=uvicorn_options(settings)["http"])  # the protocol `neorag serve` uses
    server = _Server(config)
    thread = threading.Thread(target=server.run, name="neorag-ui-test-server", daemon=True)
    thread.start()
    deadline = time.monotonic() + timeout_s
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            server.should_exit = True
            raise RuntimeError(f"uvicorn did not start on 127.0.0.1:{port}")
        time.sleep(0.05)
    try:
        yield LiveServer(f"http://127.0.0.1:{port}", server)
    finally:
        server.should_exit = True
        thread.join(timeout=15)
