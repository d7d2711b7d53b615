"""POST /retrieve: a JSON list -> KG-R1 actions (CONTRACTS §1); a JSON object -> CoRAG passages (§2).

The body is parsed here (not by pydantic) so the two shapes can share the path and the list
path stays fast: one ``json.loads``, the batch executor, one ``json.dumps``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from fastapi import APIRouter, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse, Response

from app.api.deps import get_services
from app.api.openapi import errors, json_body, model_ref
from app.api.openapi.bodies import RETRIEVE_BODY, RETRIEVE_PARAMETERS
from app.api.openapi.models import KGAnswer, KGChatAnswer, Passage, Passages
from app.api.security import READ, access
from app.core.errors import BadInput
from app.kg.cache import KGCache
from app.kg.chat import ChatOptions, run_chat
from app.kg.runtime import kg_cache, register_kg_reads
from app.kg.service import CHAT, OFFLINE, SEED, NeedsStore, run_actions
from app.store.base import GraphStore

router = APIRouter(tags=["kg"])
_FORMATS = {"seed": SEED, "legacy": SEED, "chat": CHAT}
INLINE_MAX = 1024  # a warm batch up to this size is answered on the event loop (no thread hop)
_ANSWERS = {"anyOf": [
    {"type": "array", "items": {"anyOf": [model_ref(KGAnswer), model_ref(KGChatAnswer)]},
     "description": "KG actions: one answer per item, same order"},
    model_ref(Passages),
    {"type": "array", "items": model_ref(Passage), "description": "Passages with ?shape=list"}]}
_DOCS: dict[str, Any] = {
    "openapi_extra": {**json_body(RETRIEVE_BODY), "parameters": RETRIEVE_PARAMETERS},
    "responses": {200: {"description": "KG answers, or passages",
                        "content": {"application/json": {"schema": _ANSWERS}}}, **errors(413, 422)},
}


def answer_format(param: str | None, default: str) -> str:
    """``?format=`` (seed | legacy | chat; absent or empty: the ``NEORAG_KG_DEFAULT_FORMAT`` default)."""
    if not param:
        return default
    fmt = _FORMATS.get(param)
    if fmt is None:
        raise BadInput(f"format: must be 'chat' or 'seed', got {param!r}", field="format")
    return fmt


def _dumps(data: Any) -> Response:
    body = json.dumps(data, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    return Response(content=body.encode("utf-8"), media_type="application/json")


@router.post("/retrieve", summary="KG-R1 actions (JSON list body) or CoRAG passages (JSON object body)",
             **_DOCS)
@access(READ)
async def retrieve(request: Request) -> Response:
    """List body: one answer per action, same order (``?format=chat``: KG-R1's server's answers).

    Object body: ``{"query": ..., "top_k"?}`` -> passages (``?shape=list`` for a bare list).
    """
    raw = await request.body()
    try:
        data = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise BadInput(f"body: not valid JSON ({exc})", field="body") from None
    except (ValueError, RecursionError) as exc:  # e.g. an integer past the conversion limit
        raise BadInput(f"body: {str(exc)[:200]}", field="body") from None
    services = get_services(request)
    settings = services.settings
    fmt = answer_format(request.query_params.get("format"), settings.kg_default_format)
    if isinstance(data, list):
        limit = settings.kg_max_batch
        if len(data) > limit:
            return JSONResponse(status_code=422, content={  # the schema's maxItems: a schema violation
                "error": "batch_too_large", "field": "body",
                "message": f"body: {len(data)} actions exceed the limit of {limit} (NEORAG_KG_MAX_BATCH)"})
        for index, item in enumerate(data):
            if not isinstance(item, dict):
                raise BadInput(f"body[{index}]: each action must be a JSON object, got {type(item).__name__}",
                               field=f"body[{index}]")
        cache = kg_cache(services.extras, settings.kg_cache_max_triples, settings.kg_generation_check_ms)
        register_kg_reads(services.extras, services.store)
        if fmt == CHAT:
            options = ChatOptions(settings.kg_relation_format, tuple(settings.kg_chat_actions))
            return _dumps(await _answer(run_chat, services.store, cache, data, options))
        return _dumps(await _answer(run_actions, services.store, cache, data))
    if isinstance(data, dict):
        return await _passages(request, services, data)
    raise BadInput(
        f"body: expected a JSON list of KG actions or a JSON object {{\"query\": ...}}, "
        f"got {type(data).__name__}",
        field="body",
    )


async def _answer(run: Callable[..., list[Any]], store: GraphStore, cache: KGCache, data: list[Any],
                  *options: Any) -> list[Any]:
    """A warm batch from the cache right here; anything needing the store on a worker thread."""
    if len(data) <= INLINE_MAX:
        try:
            return run(OFFLINE, cache, data, *options)
        except NeedsStore:
            pass
    return await run_in_threadpool(run, store, cache, data, *options)


async def _passages(request: Request, services: Any, data: dict[str, Any]) -> Response:
    """CoRAG passage retrieval (owned by the retrieval work; answered 503 when not installed)."""
    try:
        from app.retrieval.passages import retrieve_passages
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.startswith("app.retrieval"):
            return JSONResponse(status_code=503, content={
                "error": "not_available", "message": "passage retrieval is not installed"})
        raise
    from app.retrieval import validate

    settings = services.settings
    query = validate.question(settings, data.get("query"), field="query")
    top_k = validate.top_k(settings, data.get("top_k"), settings.passages_top_k)
    chunks = await run_in_threadpool(retrieve_passages, services, query, top_k)
    if request.query_params.get("shape") == "list":
        return _dumps(chunks)
    return _dumps({"chunks": chunks})
