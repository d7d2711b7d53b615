"""FastAPI application factory with a lifespan that opens and closes the store."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

from fastapi import FastAPI
from fastapi.middleware.cors import CORSMiddleware

from app import API_VERSION
from app.api.errors import install_error_handlers
from app.api.openapi import document as openapi_document
from app.api.routers import auth, documents, entities, graph, health, ingest, kg, query, reason, retrieve, ui
from app.api.security import PUBLIC, WRITE, access
from app.api.security.middleware import AccessGuard, EdgeGuard
from app.api.security.policy import Policy
from app.core.config import Settings, get_settings
from app.mcp_tools.server import build_mcp
from app.mcp_tools.server import mount as mount_mcp
from app.mcp_tools.server import running as mcp_running
from app.retrieval.startup import start_warming
from app.services.container import Services, build_services

log = logging.getLogger(__name__)

ROUTERS = [health.router, retrieve.router, kg.router, ingest.router, query.router, reason.router, ui.router,
           graph.router, entities.router, documents.router, auth.router]


def create_app(settings: Settings | None = None,
               services_factory: Callable[[Settings], Services] | None = None) -> FastAPI:
    """Build the app. ``services_factory`` defaults to starting/reusing the configured store."""
    settings = settings or get_settings()
    factory = services_factory or build_services
    policy = Policy.from_settings(settings)  # a malformed NEORAG_API_KEYS fails here, before anything starts

    mcp = build_mcp(lambda: app.state.services) if settings.mcp_enabled else None

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        services = factory(settings)
        app.state.services = services
        services.extras.setdefault("diagnostics", {})["security"] = policy.report
        log.info("NeoRAG %s on backend %s", API_VERSION, settings.backend)
        warming = start_warming(services) if settings.retrieval_warm_start else None
        try:
            if mcp is None:
                yield
            else:
                async with mcp_running(mcp):  # the /mcp endpoint's session manager
                    yield
        finally:
            if warming is not None and not warming.finish():
                log.warning("closing the store while the in-process indexes are still being built")
            services.close()

    app = FastAPI(title="NeoRAG", version=API_VERSION, lifespan=lifespan,
                  description="Graph-RAG over Neo4j / embedded FalkorDB: KG actions, hybrid retrieval, "
                              "cited answers.")
    install_error_handlers(app)
    for router in ROUTERS:
        app.include_router(router)
    if mcp is not None:
        # /mcp needs a write key (when keys are set): its tools include ingest, and one MCP session
        # calls read and write tools alike over the same endpoint
        access(WRITE)(mount_mcp(app, mcp, settings.api_host))
    _install_guards(app, settings, policy)
    return app


def _install_guards(app: FastAPI, settings: Settings, policy: Policy) -> None:
    """EdgeGuard (Host, cross-site) -> CORS -> AccessGuard (keys, body checks) -> routes; the OpenAPI."""
    app.state.policy = policy
    docs = {app.openapi_url, app.docs_url, app.redoc_url, app.swagger_ui_oauth2_redirect_url} - {None}
    for route in app.router.routes:  # FastAPI's own documentation pages: no data, no state
        if getattr(route, "path", None) in docs:
            access(PUBLIC)(route.endpoint)  # type: ignore[attr-defined]
    app.add_middleware(AccessGuard, policy=policy)
    if settings.cors_origins:
        app.add_middleware(CORSMiddleware, allow_origins=settings.cors_origins, allow_credentials=False,
                           allow_methods=["GET", "POST", "PUT", "PATCH", "DELETE"],
                           allow_headers=["Authorization", "X-API-Key", "Content-Type", "Accept",
                                          "Last-Event-ID"],
                           expose_headers=["X-NeoRAG-Mode"], max_age=600)
    app.add_middleware(EdgeGuard, policy=policy, routes=lambda: app.router.routes)
    openapi_document.install(app, settings)
