"""FastAPI application factory with a lifespan that opens and closes the store."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

from fastapi import FastAPI

from app import API_VERSION
from app.api.errors import install_error_handlers
from app.api.routers import documents, entities, graph, health, ingest, kg, query, reason, retrieve, ui
from app.core.config import Settings, get_settings
from app.mcp_tools.server import build_mcp
from app.mcp_tools.server import mount as mount_mcp
from app.mcp_tools.server import running as mcp_running
from app.services.container import Services, build_services

log = logging.getLogger(__name__)

ROUTERS = [health.router, retrieve.router, kg.router, ingest.router, query.router, reason.router, ui.router,
           graph.router, entities.router, documents.router]


def create_app(settings: Settings | None = None,
               services_factory: Callable[[Settings], Services] | None = None) -> FastAPI:
    """Build the app. ``services_factory`` defaults to starting/reusing the configured store."""
    settings = settings or get_settings()
    factory = services_factory or build_services

    mcp = build_mcp(lambda: app.state.services) if settings.mcp_enabled else None

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        services = factory(settings)
        app.state.services = services
        log.info("NeoRAG %s on backend %s", API_VERSION, settings.backend)
        try:
            if mcp is None:
                yield
            else:
                async with mcp_running(mcp):  # the /mcp endpoint's session manager
                    yield
        finally:
            services.close()

    app = FastAPI(title="NeoRAG", version=API_VERSION, lifespan=lifespan,
                  description="Graph-RAG over Neo4j / embedded FalkorDB: KG actions, hybrid retrieval, "
                              "cited answers.")
    install_error_handlers(app)
    for router in ROUTERS:
        app.include_router(router)
    if mcp is not None:
        mount_mcp(app, mcp, settings.api_host)
    return app
