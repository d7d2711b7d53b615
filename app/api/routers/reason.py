"""Reasoning endpoints: POST /reason/structgpt, POST /reason/corag, POST /evidence (thin HTTP layer)."""

from __future__ import annotations

from typing import Annotated, Any, Literal, cast

from fastapi import APIRouter, Depends
from fastapi.concurrency import run_in_threadpool
from pydantic import ConfigDict, Field, StringConstraints, field_validator

from app.api.deps import get_services
from app.api.openapi import errors, ok
from app.api.openapi.models import Evidences, ReasonAnswer
from app.api.openapi.strict import StrictBody
from app.api.security import READ, access
from app.core.errors import BadInput
from app.core.text import IDENTIFIER_PATTERN, NONBLANK_IDENTIFIER_PATTERN, NONBLANK_TEXT_PATTERN, TEXT_PATTERN
from app.reasoning import service
from app.services.container import Services
from app.services.llm import require_llm

router = APIRouter(tags=["reasoning"])


EntityName = Annotated[str, StringConstraints(max_length=500, pattern=NONBLANK_IDENTIFIER_PATTERN)]


# sample_id needs its dataset (else 422): said in the schema, so valid bodies are the accepted ones
_SAMPLE_NEEDS_DATASET: dict[str, Any] = {"anyOf": [
    {"not": {"required": ["sample_id"]}}, {"properties": {"sample_id": {"type": "null"}}},
    {"required": ["dataset"], "properties": {"dataset": {"type": "string"}}}]}
_QUESTION_OR_REPRESENTATION: dict[str, Any] = {"anyOf": [
    {"required": [name], "properties": {name: {"type": "string", "pattern": NONBLANK_TEXT_PATTERN}}}
    for name in ("question", "structured_representation")]}


class StructGPTRequest(StrictBody):
    """StructGPT over the KG: from the topic entities, up to ``max_depth`` hops."""

    model_config = ConfigDict(json_schema_extra=cast(Any, {"allOf": [_SAMPLE_NEEDS_DATASET]}))

    question: str = Field(min_length=1, max_length=4000, pattern=NONBLANK_TEXT_PATTERN)
    topic_entities: list[EntityName] = Field(min_length=1, max_length=20)
    dataset: str | None = Field(None, min_length=1, max_length=200, pattern=IDENTIFIER_PATTERN)
    sample_id: str | None = Field(None, min_length=1, max_length=200, pattern=IDENTIFIER_PATTERN)
    max_depth: int = Field(3, ge=1, le=10)
    width: int = Field(5, ge=1, le=50)
    bidirectional: bool = True
    max_tokens_budget: int = Field(1024, ge=16, le=65536)

    @field_validator("topic_entities")
    @classmethod
    def _entities(cls, v: list[str]) -> list[str]:
        """Entity names without surrounding blanks (blank names are refused by their pattern)."""
        return [e.strip() for e in v]


class CoRAGRequest(StrictBody):
    """CoRAG chain-of-retrieval over NeoRAG's hybrid retrieval."""

    question: str = Field(min_length=1, max_length=4000, pattern=NONBLANK_TEXT_PATTERN)
    max_path_length: int = Field(3, ge=1, le=10)
    decode_strategy: Literal["greedy", "best_of_n", "tree_search"] = "greedy"
    best_n: int = Field(4, ge=1, le=16)
    temperature: float = Field(0.7, ge=0.0, le=2.0)
    top_k: int = Field(5, ge=1, le=50)
    num_contexts: int = Field(20, ge=0, le=100)


class Turn(StrictBody):
    """One earlier turn of the conversation."""

    role: Literal["user", "assistant"]
    content: str = Field(min_length=1, max_length=4000, pattern=TEXT_PATTERN)


class EvidenceRequest(StrictBody):
    """CONVINSE evidences for a question (or its structured representation)."""

    model_config = ConfigDict(json_schema_extra=cast(Any, {
        "allOf": [_SAMPLE_NEEDS_DATASET, _QUESTION_OR_REPRESENTATION]}))

    question: str | None = Field(None, max_length=4000, pattern=TEXT_PATTERN)
    structured_representation: str | None = Field(None, max_length=4000, pattern=TEXT_PATTERN)
    history: list[Turn] = Field(
        [], max_length=20, description="Earlier turns: the LLM (when configured) writes the question's "
        "structured representation from them (CONVINSE).")
    sources: list[Literal["kb", "text"]] = Field(["kb", "text"], min_length=1)
    max_evidences: int = Field(100, ge=1, le=1000)
    dataset: str | None = Field(None, min_length=1, max_length=200, pattern=IDENTIFIER_PATTERN)
    sample_id: str | None = Field(None, min_length=1, max_length=200, pattern=IDENTIFIER_PATTERN)


def _scope(dataset: str | None, sample_id: str | None) -> None:
    if sample_id is not None and dataset is None:
        raise BadInput("dataset: sample_id needs its dataset", field="dataset")


@router.post("/reason/structgpt", response_model=None, responses={**ok(ReasonAnswer), **errors(404)})
@access(READ)
async def reason_structgpt(
    body: StructGPTRequest, services: Services = Depends(get_services)
) -> dict[str, Any]:
    """Answer a question by StructGPT-style relation choice over the KG; returns answer, triples and steps."""
    llm = require_llm(services.llm)
    _scope(body.dataset, body.sample_id)
    return await run_in_threadpool(service.structgpt, services, llm, body.model_dump())


@router.post("/reason/corag", response_model=None, responses=ok(ReasonAnswer))
@access(READ)
async def reason_corag(body: CoRAGRequest, services: Services = Depends(get_services)) -> dict[str, Any]:
    """Answer a multi-hop question with a CoRAG chain of sub-queries over hybrid retrieval."""
    llm = require_llm(services.llm)
    return await run_in_threadpool(service.corag, services, llm, body.model_dump())


@router.post("/evidence", response_model=None, responses={**ok(Evidences), **errors(404)})
@access(READ)
async def evidence(body: EvidenceRequest, services: Services = Depends(get_services)) -> dict[str, Any]:
    """Top-e CONVINSE evidences (KB facts and text chunks); no LLM needed."""
    if not (body.question or "").strip() and not (body.structured_representation or "").strip():
        raise BadInput("question: give a question or a structured_representation", field="question")
    _scope(body.dataset, body.sample_id)
    return await run_in_threadpool(service.evidence, services, body.model_dump())
