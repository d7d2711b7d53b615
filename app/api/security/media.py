"""Which request media types a route declares (its OpenAPI requestBody), for 415 answers."""

from __future__ import annotations

from typing import Any

from fastapi import params
from starlette.exceptions import HTTPException

from app.api.security.limits import is_json_type

JSON = "application/json"


class BodyTooLarge(HTTPException):
    """A streamed (multipart) body went past its limit: answered 413 by the shared handler."""

    def __init__(self, limit: int) -> None:
        super().__init__(413, f"body: more bytes than the limit of {limit} bytes "
                              "(NEORAG_UPLOAD_MAX_FILES x NEORAG_UPLOAD_MAX_BYTES)")


_CACHE: dict[int, tuple[Any, frozenset[str] | None]] = {}


def declared_media_types(route: Any) -> frozenset[str] | None:
    """Media types of the route's request body, or None when it declares no body (anything goes)."""
    hit = _CACHE.get(id(route))
    if hit is not None and hit[0] is route:
        return hit[1]
    found = _declared(route)
    if len(_CACHE) > 4096:
        _CACHE.clear()
    _CACHE[id(route)] = (route, found)
    return found


def _declared(route: Any) -> frozenset[str] | None:
    extra = getattr(route, "openapi_extra", None) or {}
    content = (extra.get("requestBody") or {}).get("content")
    if content:
        return frozenset(str(k).lower() for k in content)
    body = getattr(route, "body_field", None)
    if body is None:
        return None
    info = body.field_info
    if isinstance(info, params.File):
        return frozenset({"multipart/form-data"})
    if isinstance(info, params.Form):
        return frozenset({"multipart/form-data", "application/x-www-form-urlencoded"})
    return frozenset({str(getattr(info, "media_type", JSON)).lower()})


def accepts(route: Any, content_type: str) -> bool:
    """Whether a body of ``content_type`` may be sent to ``route``."""
    declared = declared_media_types(route)
    if declared is None:
        return True
    media = content_type.split(";", 1)[0].strip().lower()
    if media in declared or "*/*" in declared:
        return True
    return is_json_type(media) and any(is_json_type(d) for d in declared)
