"""GET /entities/search (suggestions), GET /entities/duplicates (proposals), POST /entities/merge. Thin."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Depends, Query
from pydantic import ConfigDict, Field

from app.api.deps import get_services
from app.api.graph_models import DuplicateProposals, EntitySuggestions, MergeResult
from app.api.openapi import errors
from app.api.openapi.strict import StrictBody
from app.api.security import READ, WRITE, access
from app.core.text import NONBLANK_IDENTIFIER_PATTERN
from app.entities.duplicates import MAX_PAIRS, propose
from app.entities.lookup import MAX_NAME_CHARS, MAX_SUGGESTIONS, search
from app.entities.merge import MAX_SOURCES, merge
from app.services.container import Services

router = APIRouter(tags=["entities"])


EntityName = Annotated[str, Field(min_length=1, max_length=MAX_NAME_CHARS,
                                  pattern=NONBLANK_IDENTIFIER_PATTERN)]


class MergeRequest(StrictBody):
    """Body of POST /entities/merge."""

    model_config = ConfigDict(extra="forbid", strict=True)
    target: EntityName = Field(..., description="The entity that stays (name or id).")
    sources: EntityName | Annotated[list[EntityName], Field(min_length=1, max_length=MAX_SOURCES)] = Field(
        ..., description="Entities merged into it (a name or id, or a list of 1-100 of them).")


@router.get("/entities/search", response_model=EntitySuggestions, responses=errors(404))
@access(READ)
def entities_search(
    q: str = Query(..., min_length=1, max_length=MAX_NAME_CHARS, pattern=NONBLANK_IDENTIFIER_PATTERN,
                   description="Typed text (matched against normalised names)."),
    limit: int = Query(10, ge=1, le=MAX_SUGGESTIONS, description="At most this many (1-50)."),
    services: Services = Depends(get_services),
) -> dict[str, Any]:
    """Entities whose normalised name contains ``q``, prefix matches first, then the most mentioned."""
    return {"entities": search(services.store, q, limit)}


@router.get("/entities/duplicates", response_model=DuplicateProposals, responses=errors(404))
@access(READ)
def entities_duplicates(
    min_score: float | None = Query(
        None, ge=0, le=1, description="Lowest score proposed (default NEORAG_ENTITY_DUP_MIN_SCORE)."
    ),
    limit: int = Query(50, ge=1, le=MAX_PAIRS, description="Most pairs (1-500)."),
    services: Services = Depends(get_services),
) -> dict[str, Any]:
    """Candidate duplicate pairs, best first, each with its score and the evidence behind it."""
    return propose(services, min_score, limit)


@router.post(
    "/entities/merge",
    response_model=MergeResult,
    responses={**errors(404, 409)},
)
@access(WRITE)
def entities_merge(
    body: MergeRequest = Body(..., examples=[{"target": "National Football League", "sources": ["NFL"]}]),
    services: Services = Depends(get_services),
) -> dict[str, Any]:
    """Merge ``sources`` into ``target`` (idempotent: merging again is a no-op)."""
    return merge(services, body.target, body.sources)
