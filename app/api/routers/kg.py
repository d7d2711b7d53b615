"""GET /actions (what KG-R1 clients may call, and the loaded datasets) and POST /kg/query (bridge)."""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter, Depends, Query
from pydantic import Field

from app.api.deps import get_services
from app.api.openapi import errors, model_ref, ok
from app.api.openapi.models import Actions, ChatActions, KGQueryAnswer
from app.api.openapi.strict import StrictBody
from app.api.routers.retrieve import answer_format
from app.api.security import READ, access
from app.core.errors import BadInput
from app.core.text import IDENTIFIER_PATTERN, NONBLANK_TEXT_PATTERN, TEXT_PATTERN
from app.kg import kgr1
from app.kg.actions import ACTIONS
from app.kg.bridge import answer_query
from app.kg.graph import list_datasets
from app.kg.service import CHAT
from app.services.container import Services

router = APIRouter(tags=["kg"])


_ACTIONS_ANSWER: dict[int | str, dict[str, Any]] = {200: {
    "description": "The actions and datasets (seed shape), or KG-R1's listing with ?format=chat",
                        "content": {"application/json": {"schema": {
                            "anyOf": [model_ref(Actions), model_ref(ChatActions)]}}}}}


@router.get("/actions", response_model=None, responses=_ACTIONS_ANSWER)
@access(READ)
def actions(services: Services = Depends(get_services),
            format: Literal["", "seed", "legacy", "chat"] | None = Query(
                None, description="chat: KG-R1's server's answer (default: NEORAG_KG_DEFAULT_FORMAT)")
            ) -> dict[str, Any]:
    """Every accepted action_type with its required fields, and the loaded datasets with sample counts;
    ``?format=chat``: what KG-R1's server answers (``actions`` = enabled action names)."""
    settings = services.settings
    if answer_format(format, settings.kg_default_format) == CHAT:
        names = [r["name"] for r in services.store.run("kg_dataset_names")]
        return kgr1.actions_listing(list(settings.kg_chat_actions), names)
    return {
        "actions": [{"name": s.name, "required": s.required, "optional": s.optional,
                     "result_key": s.result_key, "description": s.description} for s in ACTIONS.values()],
        "datasets": list_datasets(services.store),
        "formats": ["seed", "chat"],
        "max_batch": services.settings.kg_max_batch,
    }


class KGQuery(StrictBody):
    """POST /kg/query body."""

    query: str = Field(..., max_length=20_000, pattern=NONBLANK_TEXT_PATTERN,
                       description='get_relations("e") / get_triples("e", ["r"]) calls')
    question: str = Field("", max_length=4000, pattern=TEXT_PATTERN,
                          description="The question relations are ranked against (BM25).")
    dataset: str | None = Field(None, max_length=200, pattern=IDENTIFIER_PATTERN,
                                description="Dataset name; may be omitted when exactly one is loaded.")
    top_k: int | None = Field(None, ge=1, le=1000, description="Relations kept per get_relations call.")
    triples_per_relation: int | None = Field(None, ge=1, le=1000)


@router.post("/kg/query", response_model=None, responses={**ok(KGQueryAnswer), **errors(404)})
@access(READ)
def kg_query(body: KGQuery, services: Services = Depends(get_services)) -> dict[str, Any]:
    """Answer function calls over the whole dataset graph; returns ``{text, calls}``."""
    dataset = body.dataset
    if not dataset:
        names = [d["name"] for d in list_datasets(services.store)]
        if not names:  # what is missing is a dataset in the store, not a field of the request
            raise BadInput("dataset: no KG dataset is loaded; load one with `neorag kg load` (GET /actions "
                           "lists the loaded datasets)", status=404, field="dataset")
        if len(names) != 1:
            raise BadInput(f"dataset: required when {len(names)} datasets are loaded ({', '.join(names)})",
                           field="dataset")
        dataset = names[0]
    s = services.settings
    return answer_query(services.store, dataset, body.query, body.question, body.top_k or s.kg_bridge_top_k,
                        body.triples_per_relation or s.kg_bridge_triples_per_relation)
