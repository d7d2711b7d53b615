"""Entry points for the HTTP router, the CLI and the CONVINSE class: build an agent, run it, shape results."""

from __future__ import annotations

from typing import Any

from app.core.errors import LLMUnavailable
from app.reasoning.adapters import StoreEvidenceBackend, StoreKGView, passage_retriever, pick_dataset
from app.reasoning.convinse_sr import structured_representation
from app.reasoning.corag import CoRAGAgent, CoRAGConfig, CoRAGResult
from app.reasoning.evidence import retrieve_evidences
from app.reasoning.structgpt import StructGPTConfig, StructGPTReasoner, StructGPTResult
from app.services.container import Services
from app.services.llm import LLMClient


def run_structgpt(
    services: Services,
    llm: LLMClient,
    question: str,
    topic_entities: list[str],
    dataset: str | None = None,
    sample_id: str | None = None,
    **knobs: Any,
) -> StructGPTResult:
    """StructGPT over the sample's subgraph (``sample_id``) or the dataset's whole graph."""
    view = StoreKGView(services, pick_dataset(services, dataset), sample_id)
    cfg = StructGPTConfig(**{k: v for k, v in knobs.items() if v is not None})
    return StructGPTReasoner(llm, view, cfg).run(question, topic_entities)


def structgpt(services: Services, llm: LLMClient, params: dict[str, Any]) -> dict[str, Any]:
    """POST /reason/structgpt body -> response."""
    p = dict(params)
    res = run_structgpt(
        services,
        llm,
        p.pop("question"),
        p.pop("topic_entities"),
        p.pop("dataset", None),
        p.pop("sample_id", None),
        **p,
    )
    return res.as_dict()


def run_corag(services: Services, llm: LLMClient, question: str, **knobs: Any) -> CoRAGResult:
    """CoRAG over NeoRAG's hybrid passage retrieval."""
    cfg = CoRAGConfig(**{k: v for k, v in knobs.items() if v is not None})
    return CoRAGAgent(llm, passage_retriever(services), cfg).run(question)


def corag(services: Services, llm: LLMClient, params: dict[str, Any]) -> dict[str, Any]:
    """POST /reason/corag body -> response."""
    p = dict(params)
    res = run_corag(services, llm, p.pop("question"), **p)
    out = res.as_dict()
    out["decode_strategy"] = p.get("decode_strategy", "greedy")
    return out


def evidence(services: Services, params: dict[str, Any]) -> dict[str, Any]:
    """POST /evidence body -> ``{evidences, scores, linked_entities}`` (evidences in CONVINSE's format).

    With a ``history`` (and no ``structured_representation``) the LLM, when configured, first writes
    CONVINSE's structured representation of the question; it is returned as ``structured_representation``.
    """
    question = str(params.get("question") or "").strip()
    query = (params.get("structured_representation") or "").strip() or question
    extra: dict[str, Any] = {}
    history = params.get("history") or []
    if history and not (params.get("structured_representation") or "").strip():
        extra = _sr_query(services, question, history)
        query = extra.pop("_query", query)
    backend = StoreEvidenceBackend(services, params.get("dataset"), params.get("sample_id"))
    ranked = retrieve_evidences(
        backend, query, params.get("sources") or ["kb", "text"], int(params.get("max_evidences") or 100)
    )
    return {
        "query": query,
        "evidences": [ev for ev, _ in ranked],
        "scores": [round(s, 6) for _, s in ranked],
        "linked_entities": list(backend._owner),
        **extra,
    }


def _sr_query(services: Services, question: str, history: list[dict[str, str]]) -> dict[str, Any]:
    """``{"_query", "structured_representation"}``, or ``{"warnings"}`` when no SR could be made."""
    if services.llm is None:
        return {"warnings": [{"type": "no_llm", "detail": "history ignored: no LLM to write the structured "
                                                          "representation (NEORAG_LLM_BASE_URL)"}]}
    try:
        sr, why = structured_representation(services.llm, question, history)
    except LLMUnavailable as exc:
        sr, why = None, str(exc)
    if sr is None:
        return {"warnings": [{"type": "sr_failed", "detail": f"question used as is: {why}"}]}
    return {"_query": sr.query(), "structured_representation": sr.model_dump()}
