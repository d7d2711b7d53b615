"""Health and diagnostics reports (no HTTP here)."""

from __future__ import annotations

from typing import Any

from app import API_VERSION
from app.core.errors import NeoRAGError
from app.core.redact import redact_url
from app.services.container import Services
from app.services.structured import endpoint_mode_known
from app.store.schema import list_indexes


def health_report(services: Services) -> tuple[bool, dict[str, Any]]:
    """(ok, body) for GET /health."""
    health = services.store.health()
    if health.reachable:
        _retry_bootstrap(services)
        return True, {"status": "ok", "api_version": API_VERSION}
    body: dict[str, Any] = {"status": "degraded", "api_version": API_VERSION, "backend": health.backend,
            "reason": health.detail, "hint": _store_hint(services)}
    supervisor = services.supervisor
    if supervisor is not None:  # the embedded store is being restarted by this process
        body["store_supervisor"] = _supervisor(services)
        body["hint"] = "the embedded FalkorDB is restarting; retry in a few seconds"
    return False, body


def _retry_bootstrap(services: Services) -> None:
    """A store that was down at start gets its schema once it answers (no app restart needed)."""
    if services.schema_error is None:
        return
    try:
        services.store.bootstrap(services.embedder.dimension)
        services.schema_error = None
    except NeoRAGError as exc:
        services.schema_error = str(exc)


def _supervisor(services: Services) -> dict[str, Any] | None:
    """The embedded store's supervisor in this process (None when this process does not supervise it)."""
    sup = services.supervisor
    if sup is None:
        return None
    return {**sup.report(), "pid": sup.child.pid if sup.child else None,
            "port": sup.child.port if sup.child else None}


def _store_hint(services: Services) -> str:
    if services.settings.backend == "neo4j":
        return (f"start Neo4j at {services.settings.neo4j_uri} (a local one: `neorag neo4j start`) "
                "or fix the NEORAG_NEO4J_* settings")
    return ("run `neorag db start` (it reuses the port recorded in the data dir) or restart `neorag serve`, "
            "which starts and supervises the embedded FalkorDB")


def llm_report(services: Services) -> dict[str, Any]:
    """The LLM section: endpoint, local model server (file, context, tokens/s), structured-output counts."""
    llm, settings = services.llm, services.settings
    out: dict[str, Any] = {"configured": llm is not None, "base_url": redact_url(settings.llm_base_url),
                           "model": llm.model if llm else None}
    if llm is not None:
        out["endpoint"] = llm.shown_url
        out["structured_output"] = {"setting": settings.llm_structured_output,
                                    "mode": endpoint_mode_known(llm),
                                    "replies": llm.structured_stats.as_dict()}
        out["throughput"] = llm.throughput.as_dict()
    if services.local_llm is not None:
        out["local"] = services.local_llm.info()
    return out


def diagnostics_report(services: Services) -> dict[str, Any]:
    """Everything /diagnostics shows: store, indexes, embedder, counts, feature flags."""
    settings, store, embedder = services.settings, services.store, services.embedder
    health = store.health()
    if health.reachable:
        _retry_bootstrap(services)
    report: dict[str, Any] = {
        "api_version": API_VERSION,
        "backend": settings.backend,
        "store": {"reachable": health.reachable, "version": health.version, "detail": health.detail,
                  "server": {},
                  "graph": (settings.graph_name if settings.backend == "embedded"
                            else settings.neo4j_database),
                  "supervisor": _supervisor(services)},
        "embedding": {"model": embedder.model_name, "dimension": embedder.dimension,
                      "cache_size": embedder.cache_size()},
        "llm": llm_report(services),
        "schema_error": services.schema_error,
        "indexes": [],
        "vector_index": {"present": False, "dimension": None, "dimension_mismatch": False,
                         "searched_in": settings.retrieval_vector_backend},
        "counts": {"nodes": {}, "relationships": {}},
        "feature_flags": {
            "llm_enabled": services.llm is not None,
            "vector_enabled": True,
            "fulltext_enabled": store.capabilities().fulltext_index,
            "hash_incremental_enabled": True,
            "entity_normalize_enabled": True,
        },
    }
    if not health.reachable:
        return report
    try:
        report["store"]["server"] = store.server_details()
        indexes = list_indexes(store)
        report["indexes"] = [i.as_dict() for i in indexes]
        for idx in indexes:
            if idx.type == "VECTOR" and idx.label == "Chunk":
                mismatch = idx.dimension is not None and idx.dimension != embedder.dimension
                report["vector_index"].update({"present": True, "name": idx.name, "dimension": idx.dimension,
                                               "state": idx.state, "dimension_mismatch": mismatch})
                if mismatch:
                    report["vector_index"]["hint"] = (
                        f"index has {idx.dimension} dims, embedder {embedder.dimension}: use a fresh "
                        "NEORAG_GRAPH_NAME and re-ingest, or switch NEORAG_EMBEDDING_MODEL back")
        report["counts"]["nodes"] = {r["label"]: r["count"] for r in store.run("count_nodes_by_label")}
        report["counts"]["relationships"] = {r["type"]: r["count"] for r in store.run("count_rels_by_type")}
    except NeoRAGError as exc:
        report["store"]["detail"] = str(exc)
    for name, contribute in services.extras.get("diagnostics", {}).items():
        report[name] = contribute()
    return report
