"""``neorag serve``: start the embedded store if needed, then the API."""

from __future__ import annotations

import typer

from app.commands.common import load_settings


def register(cli: typer.Typer) -> None:
    """Attach the ``serve`` command."""

    @cli.command("serve")
    def serve(
        host: str = typer.Option(None, help="Bind address (default NEORAG_API_HOST, 127.0.0.1)."),
        port: int = typer.Option(None, help="Port (default NEORAG_API_PORT, 8010; KG-R1 clients use 8001)."),
    ) -> None:
        """Serve the API (and FalkorDB when the backend is embedded)."""
        import uvicorn

        from app.api.main import create_app
        from app.services.container import build_services

        settings = load_settings(api_host=host, api_port=port)
        services = build_services(settings)  # fail fast, with a one-line error, before binding the port
        app = create_app(settings, services_factory=lambda _s: services)
        uvicorn.run(app, host=settings.api_host, port=settings.api_port, log_level="info")
