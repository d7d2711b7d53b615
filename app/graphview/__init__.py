"""Graph view: bounded, mergeable subgraphs of the stored graph for the /ui graph tab, GET /graph,
POST /query ``include_graph`` and the MCP ``graph_neighbourhood`` tool (no HTTP here)."""
