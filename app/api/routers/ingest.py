"""POST /ingest (counts) and GET /ingest/stream (SSE progress + result). Thin: validation and translation."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator
from functools import partial
from typing import Any

from fastapi import APIRouter, Body, Depends, Query
from fastapi.responses import JSONResponse
from pydantic import ConfigDict, Field
from sse_starlette.sse import EventSourceResponse

from app.api.deps import get_services
from app.api.openapi import errors, ok
from app.api.openapi.models import SSE_DESCRIPTION, SSE_EVENT, IngestCounts
from app.api.openapi.strict import StrictBody
from app.api.security import WRITE, access
from app.core.errors import BadInput, NeoRAGError
from app.core.text import NONBLANK_TEXT_PATTERN
from app.documents.upload_ingest import drop_unlisted_upload
from app.documents.uploads import ingest_roots
from app.services.container import Services
from app.services.llm import require_llm
from ingest.jobs import ERROR, RESULT, ingest_jobs
from ingest.options import IngestOptions
from ingest.paths import checked_target
from ingest.relations_only import validate_relations_only

router = APIRouter(tags=["ingest"])
log = logging.getLogger(__name__)
HEARTBEAT_S = 15.0


class IngestRequest(StrictBody):
    """Body of POST /ingest."""

    model_config = ConfigDict(extra="ignore")
    path: str = Field(..., min_length=1, max_length=4096, pattern=NONBLANK_TEXT_PATTERN,
                      description="File or directory under an ingest root.")


def _options(incremental: bool, refresh: bool, refresh_relations: bool, checkpoint: bool, inc_rel_only: bool,
             new_after: str | None, detect_after: bool, new_count: int | None, rel_window: int | None,
             rel_truncate: int | None, rel_temperature: float | None) -> IngestOptions:
    return IngestOptions(incremental=incremental, refresh=refresh, refresh_relations=refresh_relations,
                         checkpoint=checkpoint, inc_rel_only=inc_rel_only, new_after=new_after or None,
                         detect_after=detect_after, new_count=new_count, rel_window=rel_window,
                         rel_truncate=rel_truncate, rel_temperature=rel_temperature)


class _Params:
    """Query parameters shared by both endpoints (the seed's names)."""

    def __init__(
        self,
        incremental: bool = Query(False, description="Skip chunks whose content hash is unchanged."),
        refresh: bool = Query(False, description="Rebuild entities and relations of stored chunks."),
        refresh_relations: bool = Query(True, description="With refresh: re-run LLM relation extraction."),
        checkpoint: bool = Query(True, description="Write/read .ingest_ck_<basename>.json and resume."),
        inc_rel_only: bool = Query(False, description="Relations-only incremental mode (needs an LLM)."),
        new_after: str | None = Query(None, description="Last old chunk id (relations-only)."),
        detect_after: bool = Query(False, description="Relations-only: the last new_count chunks are new."),
        new_count: int | None = Query(None, ge=1),
        rel_window: int | None = Query(None, ge=1, le=50),
        rel_truncate: int | None = Query(None, ge=50, le=20000),
        rel_temperature: float | None = Query(None, ge=0.0, le=2.0),
    ) -> None:
        self.options = _options(incremental, refresh, refresh_relations, checkpoint, inc_rel_only, new_after,
                                detect_after, new_count, rel_window, rel_truncate, rel_temperature)


def _prepare(services: Services, path: str, options: IngestOptions) -> Any:
    """Validate before any work: 403/404 path, 422 relations-only params, 503 LLM or store down."""
    target = checked_target(path, ingest_roots(services.settings), options)
    if options.inc_rel_only:
        validate_relations_only(options)
        require_llm(services.llm)
    services.store.require_reachable()
    return target


@router.post("/ingest", response_model=None, responses={**ok(IngestCounts), **errors(403, 404, 409)},
             openapi_extra={"requestBody": {"required": True}})
@access(WRITE)
def ingest(body: IngestRequest = Body(None), params: _Params = Depends(),
           services: Services = Depends(get_services)) -> Any:
    """Ingest a file or directory; answers the counts when done (409 if that path is being ingested)."""
    if body is None:  # no body, or {} (which FastAPI reads as no body)
        raise BadInput("path: field required (the file or directory to ingest)", field="path")
    target = _prepare(services, body.path, params.options)
    try:
        return ingest_jobs(services).run_sync(services, target, params.options,
                                              after=partial(drop_unlisted_upload, services, target))
    except NeoRAGError:
        raise
    except Exception as exc:  # noqa: BLE001 - one JSON line instead of a bare 500
        log.exception("ingest of %s failed", target)  # the traceback, as /ingest/stream logs it
        return JSONResponse(status_code=500, content={"error": "ingest_failed",
                                                      "message": f"{type(exc).__name__}: {exc}"})


@router.get("/ingest/stream", response_model=None, response_class=EventSourceResponse, responses={
    200: {"description": SSE_DESCRIPTION, "content": {"text/event-stream": {"schema": SSE_EVENT}}},
    **errors(403, 404, 409)})
@access(WRITE)
async def ingest_stream(path: str = Query(..., min_length=1, max_length=4096, pattern=NONBLANK_TEXT_PATTERN,
                                          description="File or directory under an ingest root."),
                        params: _Params = Depends(),
                        services: Services = Depends(get_services)) -> EventSourceResponse:
    """SSE: ``event: start``, stage lines, ``event: result``, then ``{"stage": "done"}`` (or an error line).

    The ingest runs on a background thread and continues to completion if the client disconnects.
    """
    target = await asyncio.to_thread(_prepare, services, path, params.options)
    job = ingest_jobs(services).start(services, target, params.options,
                                      after=partial(drop_unlisted_upload, services, target))

    async def events() -> AsyncIterator[dict[str, str]]:
        yield {"event": "start", "data": "{}"}
        while True:
            batch = job.drain()
            if not batch:
                await asyncio.sleep(0.05)
                continue
            for ev in batch:
                if RESULT in ev:
                    yield {"event": "result", "data": json.dumps({"stage": "result", "result": ev[RESULT]})}
                    yield {"data": json.dumps({"stage": "done"})}
                    return
                if ERROR in ev:
                    yield {"data": json.dumps({"stage": "error", "error": ev[ERROR]})}
                    return
                yield {"data": json.dumps(ev)}

    return EventSourceResponse(events(), ping=HEARTBEAT_S)
