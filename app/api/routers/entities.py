"""GET /entities/search (suggestions), GET /entities/duplicates (proposals), POST /entities/merge. Thin."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Body, Depends, Query
from pydantic import BaseModel, ConfigDict, Field

from app.api.deps import get_services
from app.api.graph_models import ERRORS, DuplicateProposals, EntitySuggestions, MergeResult
from app.entities.duplicates import propose
from app.entities.lookup import search
from app.entities.merge import merge
from app.services.container import Services

router = APIRouter(tags=["entities"])


class MergeRequest(BaseModel):
    """Body of POST /entities/merge."""

    model_config = ConfigDict(extra="forbid")
    target: Any = Field(..., description="The entity that stays (name or id).")
    sources: Any = Field(..., description="Entities merged into it (a name or id, or a list of them).")


@router.get("/entities/search", response_model=EntitySuggestions, responses=ERRORS)
def entities_search(
    q: str = Query(..., description="Typed text (matched against normalised names)."),
    limit: int = Query(10, description="At most this many (1-50)."),
    services: Services = Depends(get_services),
) -> dict[str, Any]:
    """Entities whose normalised name contains ``q``, prefix matches first, then the most mentioned."""
    return {"entities": search(services.store, q, limit)}


@router.get("/entities/duplicates", response_model=DuplicateProposals, responses=ERRORS)
def entities_duplicates(
    min_score: float | None = Query(
        None, description="Lowest score proposed (default NEORAG_ENTITY_DUP_MIN_SCORE)."
    ),
    limit: int = Query(50, description="Most pairs (1-500)."),
    services: Services = Depends(get_services),
) -> dict[str, Any]:
    """Candidate duplicate pairs, best first, each with its score and the evidence behind it."""
    return propose(services, min_score, limit)


@router.post(
    "/entities/merge",
    response_model=MergeResult,
    responses={**ERRORS, 409: {"description": "A source was already merged into another entity."}},
)
def entities_merge(
    body: MergeRequest = Body(..., examples=[{"target": "National Football League", "sources": ["NFL"]}]),
    services: Services = Depends(get_services),
) -> dict[str, Any]:
    """Merge ``sources`` into ``target`` (idempotent: merging again is a no-op)."""
    return merge(services, body.target, body.sources)
