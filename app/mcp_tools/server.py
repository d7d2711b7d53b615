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


def mount(app: Any, server: MCPServer, host: str) -> None:
    """Add the streamable-HTTP endpoint at ``/mcp`` to a FastAPI/Starlette ``app``."""
    http_app = server.streamable_http_app(streamable_http_path=MCP_PATH, host=host)
    for route in http_app.routes:
        if getattr(route, "path", None) == MCP_PATH:
            app.router.routes.append(route)


@asynccontextmanager
async def running(server: MCPServer) -> AsyncIterator[None]:
    """Run the server's HTTP session manager (inside the app's lifespan)."""
    async with server.session_manager.run():
        yield
