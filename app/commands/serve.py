"""``neorag serve``: start the embedded store if needed, then the API."""

from __future__ import annotations

import socket

import typer

from app.commands.common import load_settings
from app.commands.exposure import check_exposure
from app.core.config import Settings
from app.core.errors import ConfigError, StoreUnavailable


def check_port_free(host: str, port: int) -> None:
    """Raise a one-line ConfigError when ``host:port`` cannot be bound (busy or not allowed)."""
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds
        try:
            sock.bind((host, port))
        except OSError as exc:
            raise ConfigError(f"cannot serve on {host}:{port}", exc.strerror or str(exc),
                              "stop the process using it, or pass --port / set NEORAG_API_PORT") from None


def check_store_reachable(settings: Settings, timeout_s: float = 3.0) -> None:
    """Fail fast (one line) when the configured Neo4j does not answer; the embedded store is started later."""
    if settings.backend != "neo4j":
        return
    from app.store.factory import make_store

    store = make_store(settings)
    try:
        health = store.wait_until_reachable(timeout_s)
    finally:
        store.close()
    if not health.reachable:
        raise StoreUnavailable(f"Neo4j at {settings.neo4j_uri} is unreachable", health.detail or "no answer",
                               "start Neo4j (e.g. `docker compose up -d neo4j`) or fix NEORAG_NEO4J_URI")


def register(cli: typer.Typer) -> None:
    """Attach the ``serve`` command."""

    @cli.command("serve")
    def serve(
        host: str = typer.Option(None, help="Bind address (default NEORAG_API_HOST, 127.0.0.1)."),
        port: int = typer.Option(None, help="Port (default NEORAG_API_PORT, 8010; KG-R1 clients use 8001)."),
        insecure: bool = typer.Option(
            False, "--insecure", help="Serve a non-loopback address without NEORAG_API_KEYS (not advised)."),
        workers: int = typer.Option(None, help="Worker processes (default NEORAG_API_WORKERS, 1)."),
    ) -> None:
        """Serve the API (and FalkorDB when the backend is embedded)."""
        import uvicorn

        from app.api.main import create_app
        from app.commands.workers import uvicorn_options
        from app.services.container import build_services

        settings = check_exposure(load_settings(api_host=host, api_port=port, api_workers=workers), insecure)
        # fail fast, with a one-line error, before loading models or binding the port
        check_port_free(settings.api_host, settings.api_port)
        check_store_reachable(settings)
        if settings.backend == "embedded":
            from app.commands.db import warn_legacy_store

            warn_legacy_store(settings)
        if settings.api_workers > 1:
            from app.commands.workers import serve_workers

            serve_workers(settings)  # TCP_NODELAY kept on every worker's connections (see there)
            return
        services = build_services(settings)
        health = services.store.health()
        if not health.reachable:
            services.close()
            raise StoreUnavailable(f"the {settings.backend} store is unreachable at start",
                                   health.detail or "no answer",
                                   "see `neorag db status` and the NEORAG_* store settings")
        app = create_app(settings, services_factory=lambda _s: services)
        # one process: uvicorn binds host:port itself, so accepted sockets get TCP_NODELAY (for several
        # workers see app/commands/workers.py); httptools and uvloop are used (dependencies)
        uvicorn.run(app, host=settings.api_host, port=settings.api_port,
                    **uvicorn_options(settings))
