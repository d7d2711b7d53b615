"""GET /graph (bounded subgraphs for the graph view) and GET /graph/node (the side panel). Thin."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Query

from app.api.deps import get_services
from app.api.graph_models import ERRORS, GraphResponse, NodeDetails
from app.graphview.details import node_details
from app.graphview.service import GraphQuery, get_graph
from app.services.container import Services

router = APIRouter(tags=["graph"])


@router.get("/graph", response_model=GraphResponse, responses=ERRORS)
def graph(
    entity: str | None = Query(None, description="Entity name, surface form or key: its neighbourhood."),
    document: str | None = Query(None, description="Document id: its chunks and their entities."),
    dataset: str | None = Query(None, description="KG dataset (with sample)."),
    sample: str | None = Query(
        None, description="KG sample id (with dataset): its topic entities' subgraph."
    ),
    focus: str | None = Query(None, description="With dataset + sample: start from this entity instead."),
    node: str | None = Query(None, description="A node id from an earlier graph: its one-hop neighbourhood."),
    answer: str | None = Query(
        None, description="Evidence graph id of a streamed answer (X-NeoRAG-Graph-Id)."
    ),
    depth: int | None = Query(None, description="1 or 2 hops (entity, sample); default 1."),
    limit: int | None = Query(
        None, description="Most nodes (default NEORAG_GRAPH_DEFAULT_LIMIT); edges <= 4x."
    ),
    services: Services = Depends(get_services),
) -> dict[str, Any]:
    """A bounded subgraph for exactly one entry point; node ids are stable across requests."""
    return get_graph(
        services, GraphQuery(entity, document, dataset, sample, focus, node, answer, depth, limit)
    )


@router.get("/graph/node", response_model=NodeDetails, responses=ERRORS)
def graph_node(
    id: str = Query(..., max_length=1000, description="Node id from a graph (e:, c:, d:, s:, k:)."),
    chunks: int = Query(5, ge=0, le=50, description="Most chunk texts returned."),
    services: Services = Depends(get_services),
) -> dict[str, Any]:
    """Every stored property of one node and the text of its chunks (the page's side panel)."""
    return node_details(services.store, id, chunks)
