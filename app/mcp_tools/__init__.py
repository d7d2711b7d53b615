"""NeoRAG as an MCP server (official ``mcp`` SDK): the same services as the HTTP API, as tools."""
