"""GET /ui (the browser page), GET /ui/<asset> (its static files, from the package) and
GET /ui/api/chunks (text previews for the sources list of a streamed answer) and
GET /ui/api/ingest/roots, /ui/api/kg/samples, /ui/api/kg/sample (suggestions for the forms)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query
from fastapi.responses import FileResponse, JSONResponse, RedirectResponse, Response
from pydantic import StringConstraints

from app.api.deps import get_services
from app.api.openapi import errors, ok
from app.api.openapi.models import ChunkPreviews, IngestRoots, KGSample, KGSamples
from app.api.security import PUBLIC, READ, access
from app.core.text import IDENTIFIER_PATTERN, NONBLANK_IDENTIFIER_PATTERN
from app.services.container import Services
from app.ui import CONTENT_TYPES, STATIC_DIR, resolve_asset
from app.ui.ingest_roots import ingest_choices
from app.ui.kg_info import sample_ids, sample_info
from app.ui.previews import chunk_previews

router = APIRouter(tags=["ui"])

NAME_PATTERN = NONBLANK_IDENTIFIER_PATTERN
_HEADERS = {"Cache-Control": "no-cache", "X-Content-Type-Options": "nosniff"}


@router.get("/ui", include_in_schema=False)
@access(PUBLIC)
def ui_index() -> Response:
    """The single-page UI (Ingest, Ask, Ranking preview, KG explorer, Status)."""
    return FileResponse(STATIC_DIR / "index.html", media_type=CONTENT_TYPES[".html"], headers=_HEADERS)


@router.get("/ui/", include_in_schema=False)
@access(PUBLIC)
def ui_slash() -> Response:
    """``/ui/`` -> ``/ui`` so relative asset URLs resolve the same way."""
    return RedirectResponse("/ui", status_code=307)


@router.get("/ui/api/chunks", tags=["ui"], response_model=None, responses=ok(ChunkPreviews))
@access(READ)
def ui_chunk_previews(ids: list[Annotated[str, StringConstraints(pattern=NAME_PATTERN)]] = Query(
                          ..., min_length=1, max_length=50, description="Chunk ids (repeat it), at most 50."),
                      services: Services = Depends(get_services)) -> dict[str, list[dict[str, object]]]:
    """Text previews of stored chunks, for the sources list under a streamed answer."""
    return {"chunks": chunk_previews(services.store, ids)}


@router.get("/ui/api/ingest/roots", tags=["ui"], response_model=None, responses=ok(IngestRoots))
@access(READ)
def ui_ingest_roots(services: Services = Depends(get_services)) -> dict[str, object]:
    """The configured ingest roots and the folders/files directly inside them (path suggestions)."""
    return ingest_choices(list(services.settings.ingest_roots))


@router.get("/ui/api/kg/samples", tags=["ui"], response_model=None, responses=ok(KGSamples))
@access(READ)
def ui_kg_samples(dataset: str = Query(..., max_length=200, pattern=NAME_PATTERN,
                                       description="Loaded KG dataset name."),
                  prefix: str = Query("", max_length=200, pattern=IDENTIFIER_PATTERN,
                                      description="Sample ids starting with this."),
                  limit: int = Query(50, ge=1, le=200, description="At most this many (1-200)."),
                  services: Services = Depends(get_services)) -> dict[str, object]:
    """Sample ids of a dataset for the KG explorer's picker."""
    return {"dataset": dataset, "samples": sample_ids(services.store, dataset, prefix, limit)}


@router.get("/ui/api/kg/sample", tags=["ui"], response_model=None, responses={**ok(KGSample), **errors(404)})
@access(READ)
def ui_kg_sample(dataset: str = Query(..., max_length=200, pattern=NAME_PATTERN),
                 sample_id: str = Query(..., max_length=200, pattern=NAME_PATTERN),
                 services: Services = Depends(get_services)) -> Response:
    """One sample's question and topic entities (404 JSON when the sample is not loaded)."""
    info = sample_info(services.store, dataset, sample_id)
    if info is None:
        return JSONResponse(status_code=404, content={
            "error": "not_found", "field": "sample_id",
            "message": f"sample_id: no sample {sample_id!r} in dataset {dataset!r}"})
    return JSONResponse(content=info)


@router.get("/ui/{name:path}", include_in_schema=False)
@access(PUBLIC)
def ui_asset(name: str) -> Response:
    """A static asset of the page; 404 for anything outside app/ui/static or of an unknown type."""
    path = resolve_asset(name)
    if path is None:
        body = {"error": "not_found", "message": f"no UI asset {name!r}"}
        return JSONResponse(status_code=404, content=body)
    return FileResponse(path, media_type=CONTENT_TYPES[path.suffix], headers=_HEADERS)
