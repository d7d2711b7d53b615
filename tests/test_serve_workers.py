"""``neorag serve --workers N``: the shared listening socket keeps TCP_NODELAY on accepted connections."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Callable, Coroutine
from typing import Any

import pytest
import uvloop

from app.commands.workers import tcp_socket

Runner = Callable[[Coroutine[Any, Any, int]], int]


def accepted_nodelay(listener: socket.socket, run: Runner) -> int:
    """TCP_NODELAY of a connection an event loop accepts on ``listener`` (as a uvicorn worker does)."""
    async def main() -> int:
        loop = asyncio.get_running_loop()
        got: asyncio.Future[int] = loop.create_future()

        class Probe(asyncio.Protocol):
            def connection_made(self, transport: asyncio.BaseTransport) -> None:
                sock = transport.get_extra_info("socket")
                got.set_result(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
                transport.close()

        server = await loop.create_server(Probe, sock=listener)
        _, writer = await asyncio.open_connection("127.0.0.1", listener.getsockname()[1])
        value = await asyncio.wait_for(got, 10)
        writer.close()
        server.close()
        return value

    return run(main())


@pytest.mark.parametrize("run", [asyncio.run, uvloop.run], ids=["asyncio", "uvloop"])
def test_worker_socket_keeps_tcp_nodelay(run: Runner) -> None:
    assert accepted_nodelay(tcp_socket("127.0.0.1", 0), run) == 1


def test_a_socket_bound_as_uvicorn_binds_it_loses_tcp_nodelay_on_asyncio() -> None:
    plain = socket.socket(socket.AF_INET)  # protocol 0, as uvicorn's Config.bind_socket() creates it
    plain.bind(("127.0.0.1", 0))
    assert accepted_nodelay(plain, asyncio.run) == 0  # uvicorn issue #3149: what tcp_socket avoids
