"""GET /graph (bounded subgraphs for the graph view) and GET /graph/node (the side panel). Thin."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Query

from app.api.deps import get_services
from app.api.graph_models import GraphResponse, NodeDetails
from app.api.openapi import errors
from app.api.openapi.responses import parameter_schema
from app.api.security import READ, access
from app.core.text import NONBLANK_IDENTIFIER_PATTERN
from app.entities.lookup import MAX_NAME_CHARS
from app.graphview.details import node_details
from app.graphview.service import MAX_TEXT, GraphQuery, get_graph
from app.services.container import Services

router = APIRouter(tags=["graph"])
NODE_ID_PATTERN = "^[ecdsk]:[^\\x00-\\x1f\\x7f-\\x9f]+$"  # a kind prefix, then a key without control chars
parameter_schema("/graph", "limit", lambda s: {"maximum": s.graph_max_limit})


def _name(description: str, max_length: int = MAX_TEXT) -> Any:
    return Query(None, min_length=1, max_length=max_length, pattern=NONBLANK_IDENTIFIER_PATTERN,
                 description=description)


@router.get("/graph", response_model=GraphResponse, responses=errors(404))
@access(READ)
def graph(
    entity: str | None = _name("Entity name, surface form or key: its neighbourhood.", MAX_NAME_CHARS),
    document: str | None = _name("Document id: its chunks and their entities."),
    dataset: str | None = _name("KG dataset (with sample)."),
    sample: str | None = _name("KG sample id (with dataset): its topic entities' subgraph."),
    focus: str | None = _name("With dataset + sample: start from this entity instead."),
    node: str | None = _name("A node id from an earlier graph: its one-hop neighbourhood."),
    answer: str | None = _name("Evidence graph id of a streamed answer (X-NeoRAG-Graph-Id)."),
    depth: int | None = Query(None, ge=1, le=2, description="1 or 2 hops (entity, sample); default 1."),
    limit: int | None = Query(
        None, ge=1, description="Most nodes (default NEORAG_GRAPH_DEFAULT_LIMIT, at most "
        "NEORAG_GRAPH_MAX_LIMIT); edges <= 4x."
    ),
    services: Services = Depends(get_services),
) -> dict[str, Any]:
    """A bounded subgraph for one entry point (several: the first of entity, document, dataset + sample,
    node, answer; none: 422); node ids are stable across requests."""
    return get_graph(
        services, GraphQuery(entity, document, dataset, sample, focus, node, answer, depth, limit)
    )


@router.get("/graph/node", response_model=NodeDetails, responses=errors(404))
@access(READ)
def graph_node(
    id: str = Query(..., max_length=1000, pattern=NODE_ID_PATTERN,
                    description="Node id from a graph (e:, c:, d:, s:, k:; a question has no panel)."),
    chunks: int = Query(5, ge=0, le=50, description="Most chunk texts returned."),
    services: Services = Depends(get_services),
) -> dict[str, Any]:
    """Every stored property of one node and the text of its chunks (the page's side panel)."""
    return node_details(services.store, id, chunks)

