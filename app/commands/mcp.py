"""``neorag mcp``: NeoRAG's MCP server over stdio (for agents that spawn it; HTTP: ``neorag serve`` /mcp)."""

from __future__ import annotations

import typer

from app.commands.common import load_settings


def register(cli: typer.Typer) -> None:
    """Attach the ``mcp`` command."""

    @cli.command("mcp")
    def mcp() -> None:
        """Serve the MCP tools (query, passages, KG actions, graph neighbourhood, ingest) on stdio."""
        import anyio

        from app.mcp_tools.server import build_mcp
        from app.services.container import build_services

        settings = load_settings()
        services = build_services(settings)  # starts (or reuses) the embedded store like `serve`
        try:
            anyio.run(build_mcp(lambda: services).run_stdio_async)
        finally:
            services.close()
