"""GET /health and GET /diagnostics."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends
from fastapi.responses import JSONResponse

from app.api.deps import get_services
from app.services.container import Services
from app.services.diagnostics import diagnostics_report, health_report

router = APIRouter(tags=["status"])


@router.get("/health")
def health(services: Services = Depends(get_services)) -> JSONResponse:
    """Liveness plus api_version; 503 with status=degraded when the store is unreachable."""
    ok, body = health_report(services)
    return JSONResponse(status_code=200 if ok else 503, content=body)


@router.get("/diagnostics")
def diagnostics(services: Services = Depends(get_services)) -> dict[str, Any]:
    """Backend, server version, indexes (state, dimension), embedder, counts, feature flags."""
    return diagnostics_report(services)
