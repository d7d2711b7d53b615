"""Question answering over hybrid retrieval: POST /query (JSON and stream) and POST /ranking/preview."""

from __future__ import annotations

import hashlib
import itertools
import json
import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from app.core.errors import LLMUnavailable
from app.documents.locations import add_locations, trailer_fields
from app.retrieval import answer as ans
from app.retrieval import citations
from app.retrieval.answer import ContextItem
from app.retrieval.hybrid import retrieve
from app.retrieval.options import RetrievalResult, options_from_settings
from app.retrieval.rerank_features import explain
from app.retrieval.rewrite import rewrite_question
from app.retrieval.state import caches
from app.services.container import Services

log = logging.getLogger(__name__)
EMPTY_GRAPH = {
    "type": "empty_graph",
    "detail": "the graph has no chunks yet: ingest documents first (POST /ingest)",
}


@dataclass
class QueryRequest:
    """A validated /query request."""

    question: str
    context: list[ContextItem] = field(default_factory=list)
    history: list[dict[str, str]] = field(default_factory=list)
    top_k: int | None = None
    include_graph: bool = False  # the answer carries its evidence graph (app/graphview/evidence.py)


@dataclass
class Prepared:
    """Everything known before the answer text: retrieval, sources, prompt, warnings so far."""

    request: QueryRequest
    search_question: str
    result: RetrievalResult
    sources: list[dict[str, Any]]
    warnings: list[dict[str, str]]


def preview(services: Services, question: str, top_k: int | None = None) -> dict[str, Any]:
    """The POST /ranking/preview body: every scored candidate's fields, best first."""
    result = retrieve(services, question, options_from_settings(services, top_k, texts=False))
    if result.reranker is not None:
        explain(result.top, result.untitled, result.reranker == "trees", services.embedder.model_name)
    items = [
        {
            "id": c.id,
            "reason": c.reason,
            "score_raw": ans.round6(c.score_raw),
            "base_norm": ans.round6(c.base_norm),
            "bonus": ans.round6(c.bonus),
            "composite_score": ans.round6(c.composite),
            "final_score": ans.round6(c.final),
            "rel_type": c.rel_type,
            "rel_conf": ans.round6(c.rel_conf),
            "reasons": list(c.reasons),
            "depth": c.depth,
            "path_score": ans.round6(c.path_score),
            "via": c.via,
            "bm25_norm": ans.round6(c.bm25),
            "degree": c.degree,
            "rerank_score": ans.round6(c.rerank),
            "title": c.title,
            "features": c.features,
            "contributions": c.contributions,
            "pair_with": c.pair_with,
        }
        for c in result.top
    ]
    add_locations(items, (c.located for c in result.top))
    body: dict[str, Any] = {
        "question": question,
        "degraded": result.degraded,
        "items": items,
        "candidates_total": len(result.candidates),
        "entities": result.entities,
        "graph_mode": result.graph_mode,
        "timings_ms": result.timings_ms,
    }
    if result.degraded:
        body["degraded_reason"] = "; ".join(result.degraded_reasons)
    if result.empty_graph:
        body["warnings"] = [EMPTY_GRAPH]
    return body


def prepare(services: Services, req: QueryRequest) -> Prepared:
    """Rewrite (when it refers back), retrieve, and build the numbered sources."""
    warnings: list[dict[str, str]] = []
    search_q = rewrite_question(services, req.question, req.history, warnings)
    result = retrieve(services, search_q, options_from_settings(services, req.top_k))
    sources = [ans.graph_source(c, i) for i, c in enumerate(result.top, 1)]
    add_locations(sources, (c.located for c in result.top))
    sources += [ans.external_source(item, len(sources) + j) for j, item in enumerate(req.context, 1)]
    if result.empty_graph:
        warnings.append(EMPTY_GRAPH)
    if result.degraded:
        warnings.append({"type": "degraded", "detail": "; ".join(result.degraded_reasons)})
    return Prepared(req, search_q, result, sources, warnings)


def answer_cache_key(services: Services, req: QueryRequest) -> str:
    """Question + context + history + the settings that change answers."""
    s = services.settings
    relevant = s.model_dump(
        include={
            n
            for n in type(s).model_fields
            if n.startswith(("retrieval_", "rerank_", "llm_model", "query_answer"))
        }
    )
    payload = json.dumps(
        {
            "q": req.question,
            "c": [c.__dict__ for c in req.context],
            "h": req.history,
            "k": req.top_k,
            "g": req.include_graph,
            "s": relevant,
            "llm": s.llm_base_url,
        },
        sort_keys=True,
        default=str,
    )
    return f"{req.question[:60]}|{hashlib.sha1(payload.encode()).hexdigest()[:16]}"


def run_query(services: Services, req: QueryRequest) -> dict[str, Any]:
    """The non-stream /query body (served from the answer cache when possible)."""
    cache = caches(services).answers
    key = answer_cache_key(services, req)
    hit = cache.get(key)
    if hit is not None:
        return {**hit, "cached": True}
    prep = prepare(services, req)
    mode, text = "extractive", ""
    if services.llm is not None and prep.sources:
        try:
            text = services.llm.chat(
                ans.messages(req.question, prep.sources, req.history),
                max_tokens=services.settings.query_answer_max_tokens,
            ).text.strip()
            mode = "llm"
        except LLMUnavailable as exc:
            prep.warnings.append({"type": "llm_unavailable", "detail": f"{exc}; extractive answer instead"})
    elif services.llm is None:
        prep.warnings.append(
            {"type": "no_llm", "detail": "no LLM configured (NEORAG_LLM_BASE_URL): extractive answer"}
        )
    if mode == "extractive":
        text = ans.extractive_answer(prep.search_question, prep.sources)
    text, removed = citations.keep_valid(text, _ranks(prep.sources))
    if removed:
        prep.warnings.append(citations.invalid_warning(removed))
    if mode == "llm" and services.settings.query_cite_uncited:
        attributor = citations.Attributor(prep.sources)
        text = attributor.text(text)
        if attributor.added:
            prep.warnings.append(citations.added_warning(attributor.added))
    body: dict[str, Any] = {
        "question": req.question,
        "answer": text,
        "mode": mode,
        "sources": prep.sources,
        "references": ans.references(prep.sources),
        "entities": _entities(prep),
        "warnings": prep.warnings + ans.warnings_for(text, prep.sources),
    }
    if prep.search_question != req.question:
        body["rewritten_question"] = prep.search_question
    if req.include_graph:
        from app.graphview.evidence import answer_graph

        body["graph"] = answer_graph(services, prep.search_question, prep.result)
    if mode == "llm":  # fallbacks are not cached: the LLM may be back next time
        cache.put(key, body)
    return {**body, "cached": False}


def _entities(prep: Prepared) -> list[dict[str, Any]]:
    return [{"name": e["name"], "freq": e.get("freq")} for e in prep.result.entities]


def trailer(sources: list[dict[str, Any]]) -> str:
    """The stream's final block: blank line, [SOURCES], one line per ranked source; where a source's
    location is known it follows the contract's fields (``, page=3`` / ``, lines=12-30`` / ``, record=4``)."""
    lines = [
        f"- {s['rank']}. {s['id']} (rank={s['rank']}, reason={s['reason']}, score={float(s['score']):.4f}"
        f"{trailer_fields(s.get('location'))})"
        for s in sources
        if s.get("rank")
    ]
    return "\n\n[SOURCES]\n" + "".join(line + "\n" for line in lines)


def stream_query(services: Services, req: QueryRequest,
                 on_prepared: Callable[[Prepared], None] | None = None) -> tuple[str, Iterator[str]]:
    """(mode, text chunks) for a streaming /query; the LLM's first token is awaited here, so a dead LLM
    becomes an extractive answer, and a failure after it an inline ``[ERROR]`` line. ``on_prepared``
    sees the retrieval before any answer text (the evidence graph of ``include_graph``)."""
    prep = prepare(services, req)
    if on_prepared is not None:
        on_prepared(prep)
    if services.llm is None or not prep.sources:
        return "extractive", _extractive_stream(prep)
    deltas = services.llm.stream(ans.messages(req.question, prep.sources, req.history),
                                 max_tokens=services.settings.query_answer_max_tokens)
    try:
        first = next(deltas, "")
    except LLMUnavailable as exc:
        log.warning("LLM failed before its first token, extractive answer: %s", exc)
        return "extractive", _extractive_stream(prep)
    return "llm", _llm_stream(first, deltas, prep.sources, services.settings.query_cite_uncited)


def _extractive_stream(prep: Prepared) -> Iterator[str]:
    yield ans.extractive_answer(prep.search_question, prep.sources)
    yield trailer(prep.sources)


def _ranks(sources: list[dict[str, Any]]) -> set[int]:
    return {int(s["rank"]) for s in sources if s.get("rank")}


def _llm_stream(first: str, deltas: Iterator[str], sources: list[dict[str, Any]],
                cite_uncited: bool = True) -> Iterator[str]:
    removed: list[str] = []  # markers citing no returned source are dropped from the stream
    text = citations.filter_stream(itertools.chain([first], deltas), _ranks(sources), removed)
    try:
        yield from citations.Attributor(sources).stream(text) if cite_uncited else text
    except LLMUnavailable as exc:
        yield f"\n[ERROR] {exc}\n"
    except Exception as exc:  # noqa: BLE001 - a stream reports, it cannot change its status any more
        yield f"\n[ERROR] {type(exc).__name__}: {exc}\n"
    yield trailer(sources)
