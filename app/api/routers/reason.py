"""Reasoning endpoints: POST /reason/structgpt, POST /reason/corag, POST /evidence (thin HTTP layer)."""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter, Depends
from fastapi.concurrency import run_in_threadpool
from pydantic import BaseModel, Field, field_validator

from app.api.deps import get_services
from app.core.errors import BadInput
from app.reasoning import service
from app.services.container import Services
from app.services.llm import require_llm

router = APIRouter(tags=["reasoning"])


def _not_blank(value: str | None, name: str) -> str | None:
    if value is not None and not value.strip():
        raise ValueError(f"{name} must not be blank")
    return value


class StructGPTRequest(BaseModel):
    """StructGPT over the KG: from the topic entities, up to ``max_depth`` hops."""

    question: str = Field(min_length=1, max_length=4000)
    topic_entities: list[str] = Field(min_length=1, max_length=20)
    dataset: str | None = Field(None, min_length=1, max_length=200)
    sample_id: str | None = Field(None, min_length=1, max_length=200)
    max_depth: int = Field(3, ge=1, le=10)
    width: int = Field(5, ge=1, le=50)
    bidirectional: bool = True
    max_tokens_budget: int = Field(1024, ge=16, le=65536)

    @field_validator("question")
    @classmethod
    def _q(cls, v: str) -> str:
        return _not_blank(v, "question") or v

    @field_validator("topic_entities")
    @classmethod
    def _entities(cls, v: list[str]) -> list[str]:
        if any(not e.strip() for e in v):
            raise ValueError("topic entities must not be blank")
        return [e.strip() for e in v]


class CoRAGRequest(BaseModel):
    """CoRAG chain-of-retrieval over NeoRAG's hybrid retrieval."""

    question: str = Field(min_length=1, max_length=4000)
    max_path_length: int = Field(3, ge=1, le=10)
    decode_strategy: Literal["greedy", "best_of_n", "tree_search"] = "greedy"
    best_n: int = Field(4, ge=1, le=16)
    temperature: float = Field(0.7, ge=0.0, le=2.0)
    top_k: int = Field(5, ge=1, le=50)
    num_contexts: int = Field(20, ge=0, le=100)

    @field_validator("question")
    @classmethod
    def _q(cls, v: str) -> str:
        return _not_blank(v, "question") or v


class Turn(BaseModel):
    """One earlier turn of the conversation."""

    role: Literal["user", "assistant"]
    content: str = Field(min_length=1, max_length=4000)


class EvidenceRequest(BaseModel):
    """CONVINSE evidences for a question (or its structured representation)."""

    question: str | None = Field(None, max_length=4000)
    structured_representation: str | None = Field(None, max_length=4000)
    history: list[Turn] = Field(
        [], max_length=20, description="Earlier turns: the LLM (when configured) writes the question's "
        "structured representation from them (CONVINSE).")
    sources: list[Literal["kb", "text"]] = Field(["kb", "text"], min_length=1)
    max_evidences: int = Field(100, ge=1, le=1000)
    dataset: str | None = Field(None, min_length=1, max_length=200)
    sample_id: str | None = Field(None, min_length=1, max_length=200)


def _scope(dataset: str | None, sample_id: str | None) -> None:
    if sample_id is not None and dataset is None:
        raise BadInput("dataset: sample_id needs its dataset", field="dataset")


@router.post("/reason/structgpt")
async def reason_structgpt(
    body: StructGPTRequest, services: Services = Depends(get_services)
) -> dict[str, Any]:
    """Answer a question by StructGPT-style relation choice over the KG; returns answer, triples and steps."""
    llm = require_llm(services.llm)
    _scope(body.dataset, body.sample_id)
    return await run_in_threadpool(service.structgpt, services, llm, body.model_dump())


@router.post("/reason/corag")
async def reason_corag(body: CoRAGRequest, services: Services = Depends(get_services)) -> dict[str, Any]:
    """Answer a multi-hop question with a CoRAG chain of sub-queries over hybrid retrieval."""
    llm = require_llm(services.llm)
    return await run_in_threadpool(service.corag, services, llm, body.model_dump())


@router.post("/evidence")
async def evidence(body: EvidenceRequest, services: Services = Depends(get_services)) -> dict[str, Any]:
    """Top-e CONVINSE evidences (KB facts and text chunks); no LLM needed."""
    if not (body.question or "").strip() and not (body.structured_representation or "").strip():
        raise BadInput("question: give a question or a structured_representation", field="question")
    _scope(body.dataset, body.sample_id)
    return await run_in_threadpool(service.evidence, services, body.model_dump())
