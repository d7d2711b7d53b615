"""GET /ui (the browser page) and GET /ui/<asset> (its static files, from the package)."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import FileResponse, JSONResponse, RedirectResponse, Response

from app.ui import CONTENT_TYPES, STATIC_DIR, resolve_asset

router = APIRouter(tags=["ui"])

_HEADERS = {"Cache-Control": "no-cache", "X-Content-Type-Options": "nosniff"}


@router.get("/ui", include_in_schema=False)
def ui_index() -> Response:
    """The single-page UI (Ingest, Ask, Ranking preview, KG explorer, Status)."""
    return FileResponse(STATIC_DIR / "index.html", media_type=CONTENT_TYPES[".html"], headers=_HEADERS)


@router.get("/ui/", include_in_schema=False)
def ui_slash() -> Response:
    """``/ui/`` -> ``/ui`` so relative asset URLs resolve the same way."""
    return RedirectResponse("/ui", status_code=307)


@router.get("/ui/{name:path}", include_in_schema=False)
def ui_asset(name: str) -> Response:
    """A static asset of the page; 404 for anything outside app/ui/static or of an unknown type."""
    path = resolve_asset(name)
    if path is None:
        body = {"error": "not_found", "message": f"no UI asset {name!r}"}
        return JSONResponse(status_code=404, content=body)
    return FileResponse(path, media_type=CONTENT_TYPES[path.suffix], headers=_HEADERS)
