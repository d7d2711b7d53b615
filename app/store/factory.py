"""Builds the configured GraphStore (the only place that knows both backends)."""

from __future__ import annotations

from app.core.config import Settings
from app.store.base import GraphStore
from app.store.cypher_library import CypherLibrary
from app.store.embedded import EmbeddedServer, ServerInfo


def embedded_server(settings: Settings) -> EmbeddedServer:
    """The embedded FalkorDB server manager for the configured data dir."""
    return EmbeddedServer(settings.falkor_data_dir, settings.falkor_port, settings.falkor_host,
                          settings.falkor_module_args, aof_rewrite_mb=settings.falkor_aof_rewrite_mb)


def make_store(settings: Settings, server: ServerInfo | None = None) -> GraphStore:
    """Connect to the configured backend (the embedded server must already run).

    With vectors searched in process (``retrieval_vector_backend=memory``), a store that rebuilds its vector
    index whenever it loads its data keeps none: that rebuild is most of its start and crash-recovery time.
    """
    store = _connect(settings, server)
    store.keep_vector_index = (settings.retrieval_vector_backend == "store"
                               or not store.capabilities().vector_index_rebuilt_at_load)
    return store


def _connect(settings: Settings, server: ServerInfo | None) -> GraphStore:
    if settings.backend == "neo4j":
        from app.store.neo4j_store import Neo4jStore

        library = CypherLibrary(settings.cypher_dir, "neo4j")
        return Neo4jStore(
            library, settings.neo4j_uri, settings.neo4j_user, settings.neo4j_password,
            settings.neo4j_database, settings.write_batch_size, settings.store_timeout_s,
            settings.neo4j_max_retry_s, settings.store_reconnect_wait_s,
        )
    from app.store.falkor import FalkorStore

    library = CypherLibrary(settings.cypher_dir, "falkordb")
    manager = embedded_server(settings)
    info = server or manager.status()
    port = info.port if info else (settings.falkor_port or manager.recorded_port())
    return FalkorStore(
        library, settings.falkor_host, port, settings.graph_name,
        settings.write_batch_size, settings.store_timeout_s,
        reconnect_wait_s=settings.store_reconnect_wait_s, locate=manager.current_port,
    )
