"""Maps domain errors to JSON HTTP responses (4xx for bad input, 503 for unavailable backends)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from app.core.errors import BadInput, ConfigError, LLMUnavailable, StatementError, StoreUnavailable
from app.core.text import PATTERN_MEANINGS

_CODES = {400: "bad_request", 401: "unauthorized", 403: "forbidden", 404: "not_found",
          405: "method_not_allowed", 409: "conflict", 413: "body_too_large", 415: "unsupported_media_type",
          422: "invalid_request", 429: "too_many_requests", 503: "unavailable"}


_UNION_TAG = re.compile(r"^(str|int|float|bool|none|constrained-\w+|[\w-]+\[.*\])$")


def _field(loc: Sequence[object]) -> str:
    """``("body", "topic_entities", 0)`` -> ``topic_entities.0``; ``("query", "ids")`` -> ``ids``; the tags
    pydantic adds for a union member (``sources.list[constrained-str].0``) are left out."""
    parts = list(loc[1:] if loc and loc[0] in ("body", "query", "path", "header", "cookie") else loc)
    parts = parts[:1] + [p for p in parts[1:] if not (isinstance(p, str) and _UNION_TAG.match(p))]
    return ".".join(str(p) for p in parts) or "body"  # only the first item says where: a field may be "query"


def _problem(error: dict[str, Any]) -> tuple[str, str]:
    """(field, message) of one pydantic/FastAPI error; a JSON syntax error points into the body."""
    loc = error.get("loc", ["body"])
    if error.get("type") == "json_invalid":
        where = loc[-1] if loc and isinstance(loc[-1], int) else None
        detail = (error.get("ctx") or {}).get("error") or "invalid JSON"
        return "body", f"not valid JSON ({detail}{f' at character {where}' if where is not None else ''})"
    if error.get("type") == "string_pattern_mismatch":
        meaning = PATTERN_MEANINGS.get(str((error.get("ctx") or {}).get("pattern")))
        if meaning:
            return _field(loc), meaning
    return _field(loc), str(error.get("msg", "invalid value"))


def _allowed_methods(request: Request) -> list[str]:
    """Every method some route serves at the request's path (GET and DELETE may be two routes)."""
    from starlette.routing import Match

    from app.api.security.access import flat_routes

    probe = {"type": "http", "path": request.url.path, "method": "", "root_path": ""}
    methods: set[str] = set()
    for route in flat_routes(request.app.router.routes):
        if route.matches(probe)[0] is not Match.NONE:
            methods |= set(getattr(route, "methods", None) or ())
    return sorted(methods)


def install_error_handlers(app: FastAPI) -> None:
    """Register the handlers on ``app``."""

    @app.exception_handler(RequestValidationError)
    async def _invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        problems = [_problem(e) for e in exc.errors()] or [("body", "invalid request")]
        field, message = problems[0]
        return JSONResponse(status_code=422, content={
            "error": "invalid_request", "message": f"{field}: {message}", "field": field,
            "detail": [{"field": f, "message": m} for f, m in problems],
        })

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        status = exc.status_code
        body: dict[str, Any] = {"error": _CODES.get(status, "error"), "message": str(exc.detail)}
        if status in (400, 413, 422):
            body["field"] = "body"
        headers = exc.headers
        if status == 405:  # Starlette names only the first matching route's methods
            headers = {**(headers or {}), "Allow": ", ".join(_allowed_methods(request))}
        return JSONResponse(status_code=status, content=body, headers=headers)

    @app.exception_handler(BadInput)
    async def _bad(_: Request, exc: BadInput) -> JSONResponse:
        body = {"error": "invalid_request", "message": str(exc)}
        if exc.field:
            body["field"] = exc.field
        headers = {"WWW-Authenticate": 'Bearer realm="neorag"'} if exc.status == 401 else None
        return JSONResponse(status_code=exc.status, content=body, headers=headers)

    @app.exception_handler(StoreUnavailable)
    async def _store(_: Request, exc: StoreUnavailable) -> JSONResponse:
        return JSONResponse(status_code=503, content={
            "error": "store_unavailable", "message": exc.what, "reason": exc.why, "hint": exc.fix})

    @app.exception_handler(LLMUnavailable)
    async def _llm(_: Request, exc: LLMUnavailable) -> JSONResponse:
        return JSONResponse(status_code=503, content={
            "error": "llm_unavailable", "message": exc.what, "reason": exc.why, "hint": exc.fix})

    @app.exception_handler(StatementError)
    async def _stmt(_: Request, exc: StatementError) -> JSONResponse:
        return JSONResponse(status_code=500, content={"error": "statement_failed", "message": str(exc)})

    @app.exception_handler(ConfigError)
    async def _config(_: Request, exc: ConfigError) -> JSONResponse:
        return JSONResponse(status_code=503, content={"error": "misconfigured", "message": str(exc)})
