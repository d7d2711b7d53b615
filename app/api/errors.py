"""Maps domain errors to JSON HTTP responses (4xx for bad input, 503 for unavailable backends)."""

from __future__ import annotations

from collections.abc import Sequence

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

from app.core.errors import BadInput, ConfigError, LLMUnavailable, StatementError, StoreUnavailable


def _field(loc: Sequence[object]) -> str:
    parts = [str(p) for p in loc if p not in ("body", "query", "path")]
    return ".".join(parts) or "body"


def install_error_handlers(app: FastAPI) -> None:
    """Register the handlers on ``app``."""

    @app.exception_handler(RequestValidationError)
    async def _invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        errors = exc.errors()
        first = errors[0] if errors else {"loc": ["body"], "msg": "invalid request"}
        field = _field(first.get("loc", ["body"]))
        return JSONResponse(status_code=422, content={
            "error": "invalid_request", "message": f"{field}: {first.get('msg')}", "field": field,
            "detail": [{"field": _field(e.get("loc", [])), "message": e.get("msg")} for e in errors],
        })

    @app.exception_handler(BadInput)
    async def _bad(_: Request, exc: BadInput) -> JSONResponse:
        body = {"error": "invalid_request", "message": str(exc)}
        if exc.field:
            body["field"] = exc.field
        return JSONResponse(status_code=exc.status, content=body)

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
