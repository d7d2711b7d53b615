"""The process's long-lived services, built once by the app lifespan or the CLI."""

from __future__ import annotations

import importlib
import logging
from dataclasses import dataclass, field
from typing import Any

from app.core.child import Supervisor
from app.core.config import Settings
from app.core.errors import NeoRAGError
from app.services.embedder import Embedder
from app.services.embedder_choice import shared_embedder
from app.services.llm import LLMClient
from app.services.local_llm import LocalLLM, llm_for
from app.services.local_llm import release as release_local_llm
from app.store.base import GraphStore
from app.store.embedded import ServerInfo
from app.store.factory import embedded_server, make_store

log = logging.getLogger(__name__)


@dataclass
class Services:
    """Everything a request handler may need. Feature modules hang their own objects on ``extras``."""

    settings: Settings
    store: GraphStore
    embedder: Embedder
    llm: LLMClient | None
    server: ServerInfo | None = None
    schema_error: str | None = None
    extras: dict[str, Any] = field(default_factory=dict)
    local_llm: LocalLLM | None = None  # the supervised model server when NEORAG_LLM_BASE_URL=local
    supervisor: Supervisor[ServerInfo] | None = None

    def close(self) -> None:
        """Close connections; stop the embedded server only if this process started it (or restarted it)."""
        self.store.close()
        if self.local_llm is not None:
            release_local_llm(self.local_llm)
            self.local_llm = None
        stop_embedded_store(self.settings, self.server, self.supervisor)


def supervise_embedded(settings: Settings) -> Supervisor[ServerInfo]:
    """Start (or reuse) the embedded FalkorDB under a supervisor that restarts it when it dies; the server
    is tied to the supervising thread, so it dies with this process."""
    manager = embedded_server(settings)
    supervisor: Supervisor[ServerInfo] = Supervisor(
        "FalkorDB", lambda: manager.start(tie_to_parent=True), manager.alive,
        interval_s=settings.store_check_interval_s)
    supervisor.run()
    return supervisor


def start_embedded_store(settings: Settings) -> tuple[ServerInfo, Supervisor[ServerInfo] | None]:
    """Start (or reuse) the embedded FalkorDB, under a supervisor when NEORAG_STORE_SUPERVISE is on."""
    if settings.store_supervise:
        supervisor = supervise_embedded(settings)
        assert supervisor.child is not None  # run() returns once the first start succeeded
        return supervisor.child, supervisor
    return embedded_server(settings).start(), None


def stop_embedded_store(settings: Settings, server: ServerInfo | None,
                        supervisor: Supervisor[ServerInfo] | None) -> None:
    """Stop the embedded FalkorDB only if this process started (or restarted) it; close its supervisor."""
    if supervisor is not None:
        server = supervisor.child
    stop = server is not None and server.started_here
    if supervisor is not None:
        supervisor.close(stop_child=(lambda _i: embedded_server(settings).stop()) if stop else None)
    elif stop:
        embedded_server(settings).stop()


def build_services(settings: Settings, start_embedded: bool = True) -> Services:
    """Start (or reuse) the store, load the embedder, bootstrap the schema."""
    # the embedder first: a missing model fails before any server is started (and left running)
    embedder = shared_embedder(settings.embedding_model, settings.embedding_device,
                               settings.embedding_batch_size, settings.models_dir)
    llm, local = llm_for(settings)  # NEORAG_LLM_BASE_URL=local starts the model server here
    server, supervisor = None, None
    try:
        if settings.backend == "embedded" and start_embedded:
            server, supervisor = start_embedded_store(settings)
        store = make_store(settings, server)
    except BaseException:
        if local is not None:
            release_local_llm(local)
        raise
    services = Services(settings, store, embedder, llm, server, local_llm=local, supervisor=supervisor)
    try:
        store.bootstrap(embedder.dimension)
    except NeoRAGError as exc:  # the app still starts; /health and /diagnostics say why
        services.schema_error = str(exc)
        log.error("schema bootstrap failed: %s", exc)
    # query embeddings: one batching worker, warmed in the background (start-up does not wait)
    embedder.queries(settings.embedding_query_threads, settings.embedding_query_window_ms,
                     settings.embedding_query_warm_words, settings.embedding_query_precision)
    run_feature_startups(services)
    return services


# Features that set themselves up once per process; each module defines ``startup(services) -> None``.
FEATURE_STARTUPS = ("app.retrieval.startup",)


def run_feature_startups(services: Services) -> None:
    """Let every feature set itself up once (e.g. register its /diagnostics section); a failing hook is
    logged and skipped so one feature never stops the app from starting."""
    for name in FEATURE_STARTUPS:
        try:
            importlib.import_module(name).startup(services)
        except Exception:  # noqa: BLE001 - isolation between features
            log.exception("feature start-up %s failed", name)
