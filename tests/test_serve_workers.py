"""``neorag serve --workers N``: the shared listening socket keeps TCP_NODELAY on accepted connections."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Callable, Coroutine
from typing import Any

import pytest
import uvicorn
import uvloop

from app.api.http_protocol import JsonErrorsHttpProtocol
from app.commands.exposure import check_exposure
from app.commands.workers import tcp_socket, uvicorn_options, worker_environment
from app.core.config import Settings

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


def test_workers_see_the_bind_address_and_the_extended_host_allow_list(
        monkeypatch: pytest.MonkeyPatch) -> None:
    served = check_exposure(Settings(_env_file=None, api_host="192.0.2.10", api_port=8123,  # type: ignore[call-arg]
                                     api_keys="read:" + "r" * 20), insecure=False)
    assert served.allowed_hosts == ["192.0.2.10"]
    for name, value in worker_environment(served).items():
        monkeypatch.setenv(name, value)
    worker = Settings(_env_file=None)  # type: ignore[call-arg]  # what create_app() builds in a worker
    assert (worker.api_host, worker.api_port, worker.allowed_hosts) == ("192.0.2.10", 8123, ["192.0.2.10"])


def test_one_process_and_workers_get_the_same_uvicorn_options() -> None:
    settings = Settings(_env_file=None, api_keep_alive_s=90, api_access_log=False)  # type: ignore[call-arg]
    options = uvicorn_options(settings)
    assert options == {"log_level": "info", "access_log": False, "timeout_keep_alive": 90,
                       "http": JsonErrorsHttpProtocol}  # JSON 400s from the HTTP parser (issue 25)
    config = uvicorn.Config("app.api.main:create_app", factory=True, **options)
    config.load()
    assert config.http_protocol_class is JsonErrorsHttpProtocol
    assert Settings(_env_file=None).api_keep_alive_s == 65  # type: ignore[call-arg]
