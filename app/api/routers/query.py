"""POST /query, POST /ranking/preview, GET /cache/stats, POST /cache/clear (thin HTTP layer)."""

from __future__ import annotations

import logging
from typing import Any

from fastapi import APIRouter, Body, Depends, Query, Request
from fastapi.concurrency import iterate_in_threadpool
from fastapi.responses import JSONResponse, StreamingResponse

from app.api.deps import get_services
from app.api.openapi import errors, json_body, ok
from app.api.openapi.bodies import PREVIEW_BODY, QUERY_BODY
from app.api.openapi.models import CacheStats, Cleared, QueryAnswer, RankingPreview
from app.api.security import READ, WRITE, access, writer
from app.core.errors import BadInput, LLMUnavailable, StoreUnavailable
from app.graphview.evidence import keep_answer_graph
from app.retrieval import validate
from app.retrieval.qa import Prepared, QueryRequest, preview, run_query, stream_query
from app.retrieval.state import caches
from app.services.container import Services

router = APIRouter(tags=["query"])
log = logging.getLogger(__name__)

def _body(body: Any) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise BadInput("body: must be a JSON object", field="body")
    return body


def _request(services: Services, body: dict[str, Any]) -> QueryRequest:
    s = services.settings
    stream = body.get("stream", False)
    if not isinstance(stream, bool):
        raise BadInput("stream: must be true or false", field="stream")
    include_graph = body.get("include_graph", False)
    if not isinstance(include_graph, bool):
        raise BadInput("include_graph: must be true or false", field="include_graph")
    return QueryRequest(
        question=validate.question(s, body.get("question")),
        context=validate.context(s, body.get("context")),
        history=validate.history(s, body.get("history")),
        top_k=validate.top_k(s, body.get("top_k"), s.retrieval_top_k),
        include_graph=include_graph,
    )


@router.post("/query", response_model=None, openapi_extra=json_body(QUERY_BODY), responses=ok(
    QueryAnswer, "The answer (JSON), or with stream=true text/plain chunks ending in a [SOURCES] trailer",
    media_types=("text/plain",)))
@access(READ)
def query(
    body: Any = Body(...), services: Services = Depends(get_services)
) -> dict[str, Any] | StreamingResponse | JSONResponse:
    """Answer a question with cited sources: JSON, or text/plain chunks plus a [SOURCES] trailer."""
    data = _body(body)
    req = _request(services, data)
    try:
        if data.get("stream", False):
            headers: dict[str, str] = {}

            def keep_graph(prep: Prepared) -> None:  # include_graph: GET /graph?answer=<id> draws it
                headers["X-NeoRAG-Graph-Id"] = keep_answer_graph(services, prep.search_question, prep.result)

            mode, chunks = stream_query(services, req, keep_graph if req.include_graph else None)
            return StreamingResponse(
                iterate_in_threadpool(chunks),
                media_type="text/plain; charset=utf-8",
                headers={"X-NeoRAG-Mode": mode, **headers},
            )
        return run_query(services, req)
    except (BadInput, StoreUnavailable, LLMUnavailable):
        raise  # 4xx / 503 with a hint, from the shared handlers
    except Exception as exc:  # noqa: BLE001 - the contract's failure shape
        log.exception("query failed")
        return JSONResponse(status_code=500, content={"error": "query_failed", "message": str(exc)})


@router.post("/ranking/preview", response_model=None, openapi_extra=json_body(PREVIEW_BODY),
             responses=ok(RankingPreview))
@access(READ)
def ranking_preview(
    body: Any = Body(...),
    services: Services = Depends(get_services),
) -> dict[str, Any]:
    """The scoring breakdown of the retrieved chunks (no LLM)."""
    data = _body(body)
    s = services.settings
    return preview(
        services,
        validate.question(s, data.get("question")),
        validate.top_k(s, data.get("top_k"), s.retrieval_top_k),
    )


@router.get("/cache/stats", response_model=None, responses={**ok(CacheStats), **errors(403)})
@access(READ)
def cache_stats(request: Request, services: Services = Depends(get_services),
                texts: bool = Query(False, description="Show the keys' texts (recent questions of every "
                                                       "client): needs a write key when keys are set")
                ) -> dict[str, Any] | JSONResponse:
    """Sizes, hit counts and the recent keys of the query-embedding and answer caches; the keys as
    ``sha256:`` digests unless ``texts=true`` with a write key."""
    if texts and not writer(request):
        return JSONResponse(status_code=403, content={
            "error": "insufficient_scope", "field": "texts",
            "message": "texts: the cached questions of every client need a write key; without texts=true "
                       "the keys are shown as sha256 digests"})
    return caches(services).stats(texts=texts)


@router.post("/cache/clear", response_model=None, responses=ok(Cleared))
@access(WRITE)
def cache_clear(services: Services = Depends(get_services)) -> dict[str, bool]:
    """Empty both caches."""
    caches(services).clear()
    return {"cleared": True}
