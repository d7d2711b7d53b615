"""``neorag serve --workers N``: several uvicorn worker processes on one listening socket.

uvicorn binds the shared socket of ``--workers`` with protocol 0; accepted connections inherit it and
asyncio then never sets TCP_NODELAY on them, so every keep-alive response after the first waits for the
client's delayed ACK (~40 ms on Linux; uvicorn issue #3149). :func:`tcp_socket` binds it with
``IPPROTO_TCP`` instead, so each worker's connections get TCP_NODELAY as the one-process server's do.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
from typing import TypedDict

from app.core.config import Settings


def tcp_socket(host: str, port: int) -> socket.socket:
    """A listening TCP socket for several workers whose accepted connections get TCP_NODELAY."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.set_inheritable(True)
    return sock


class UvicornOptions(TypedDict):
    """The uvicorn settings NeoRAG sets (typed, so they pass to uvicorn.run / uvicorn.Config as keywords)."""

    log_level: str
    access_log: bool
    timeout_keep_alive: int
    http: type[asyncio.Protocol]


def uvicorn_options(settings: Settings) -> UvicornOptions:
    """uvicorn settings shared by the one-process server and the workers (JSON 400s for requests the HTTP
    parser refuses, see app/api/http_protocol.py)."""
    from app.api.http_protocol import JsonErrorsHttpProtocol

    return {"log_level": "info", "access_log": settings.api_access_log,
            "timeout_keep_alive": settings.api_keep_alive_s, "http": JsonErrorsHttpProtocol}


def worker_environment(settings: Settings) -> dict[str, str]:
    """What the worker processes must see in their environment: each builds its settings from it, so the
    command line's host and port, and the Host allow-list ``neorag serve`` extended for a specific bind
    address, travel this way (else a worker would refuse the Host its clients use)."""
    return {"NEORAG_API_HOST": settings.api_host, "NEORAG_API_PORT": str(settings.api_port),
            "NEORAG_ALLOWED_HOSTS": json.dumps(list(settings.allowed_hosts))}


def serve_workers(settings: Settings) -> None:
    """Serve the API from ``settings.api_workers`` processes; each builds its own services (store
    connection, embedder, KG cache). The embedded FalkorDB is started and supervised here, in the parent
    (restarted when it dies, killed with the parent), and, with ``NEORAG_LLM_BASE_URL=local``, the local
    model server is started here once; the workers reuse both and follow the store."""
    import uvicorn
    from uvicorn.supervisors import Multiprocess

    from app.services.container import start_embedded_store, stop_embedded_store
    from app.services.local_llm import release, share_with_workers

    os.environ.update(worker_environment(settings))
    server, supervisor = None, None
    if settings.backend == "embedded":
        server, supervisor = start_embedded_store(settings)
        os.environ["NEORAG_STORE_SUPERVISE"] = "false"  # the workers reuse it; one supervisor (or none)
    model = share_with_workers(settings, os.environ)
    try:
        config = uvicorn.Config("app.api.main:create_app", factory=True, host=settings.api_host,
                                port=settings.api_port, workers=settings.api_workers,
                                **uvicorn_options(settings))
        Multiprocess(config, sockets=[tcp_socket(settings.api_host, settings.api_port)]).run()
    finally:
        if model is not None:
            release(model)
        stop_embedded_store(settings, server, supervisor)
