"""GET /health and GET /diagnostics."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends
from fastapi.responses import JSONResponse

from app.api.deps import get_services
from app.api.openapi import ok
from app.api.openapi.models import Diagnostics, Health
from app.api.security import PUBLIC, READ, access
from app.services.container import Services
from app.services.diagnostics import diagnostics_report, health_report

router = APIRouter(tags=["status"])


@router.get("/health", response_model=None, responses={
    **ok(Health), 503: {"model": Health, "description": "The store is unreachable: degraded, with a hint"}})
@access(PUBLIC)
def health(services: Services = Depends(get_services)) -> JSONResponse:
    """Liveness plus api_version; 503 with status=degraded when the store is unreachable."""
    ok, body = health_report(services)
    return JSONResponse(status_code=200 if ok else 503, content=body)


@router.get("/diagnostics", response_model=None, responses=ok(Diagnostics))
@access(READ)
def diagnostics(services: Services = Depends(get_services)) -> dict[str, Any]:
    """Backend, server version, indexes (state, dimension), embedder, counts, feature flags."""
    return diagnostics_report(services)
