"""The MCP server: ``neorag mcp`` (stdio) and ``/mcp`` in the FastAPI app (streamable HTTP).

Both serve the same tools (app/mcp_tools/tools.py) over the process's services. In the app, the MCP
endpoint is one route at ``/mcp`` (no redirect to ``/mcp/``), and its session manager runs inside the
app's lifespan. The SDK turns on DNS-rebinding protection (Host / Origin must be loopback) when
``NEORAG_API_HOST`` is a loopback address.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from mcp.server.mcpserver import MCPServer

from app import API_VERSION
from app.mcp_tools.tools import ServicesGetter, make_tools

MCP_PATH = "/mcp"
INSTRUCTIONS = (
    "NeoRAG answers questions over ingested documents with cited sources (query), retrieves passages "
    "(retrieve_passages), runs KG-R1 actions over loaded KG samples (get_relations, get_head_entities, "
    "get_tail_entities), draws an entity's graph neighbourhood (graph_neighbourhood) and ingests files "
    "under the server's ingest roots (ingest)."
)


def build_mcp(get: ServicesGetter) -> MCPServer:
    """An MCP server whose tools use ``get()``'s services."""
    server: MCPServer = MCPServer(name="neorag", version=API_VERSION, instructions=INSTRUCTIONS,
                                  log_level="WARNING")
    for fn in make_tools(get):
        server.add_tool(fn, name=fn.__name__)
    return server


class McpEndpoint:
    """The ASGI app of the ``/mcp`` route: forwards to the streamable-HTTP handler of the current app run.

    The SDK's session manager runs only once per instance, so :func:`running` makes a new handler each
    time the app starts (a test client, or a server restarted in one process, starts it again).
    """

    def __init__(self, server: MCPServer, host: str) -> None:
        self.server, self.host = server, host
        self.handler: Any = None
        self.renew()

    def renew(self) -> None:
        """A fresh handler (and session manager) from the server."""
        http_app = self.server.streamable_http_app(streamable_http_path=MCP_PATH, host=self.host)
        for route in http_app.routes:
            if getattr(route, "path", None) == MCP_PATH:
                self.handler = route.endpoint  # type: ignore[attr-defined]

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        await self.handler(scope, receive, send)


def mount(app: Any, server: MCPServer, host: str) -> McpEndpoint:
    """Add the streamable-HTTP endpoint at ``/mcp`` to a FastAPI/Starlette ``app``; returns its endpoint."""
    from starlette.routing import Route

    endpoint = McpEndpoint(server, host)
    app.router.routes.append(Route(MCP_PATH, endpoint=endpoint))
    server._neorag_endpoint = endpoint  # type: ignore[attr-defined]  # renewed by running()
    return endpoint


@asynccontextmanager
async def running(server: MCPServer) -> AsyncIterator[None]:
    """Run the server's HTTP session manager (inside the app's lifespan); a new one on every run."""
    endpoint: McpEndpoint | None = getattr(server, "_neorag_endpoint", None)
    if endpoint is not None and endpoint.handler is not None and _has_run(server):
        endpoint.renew()
    async with server.session_manager.run():
        yield


def _has_run(server: MCPServer) -> bool:
    return bool(getattr(server.session_manager, "_has_started", False))
