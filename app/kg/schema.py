"""Creates the KG indexes (the ``ddl_*_kg_*`` statements) before any KG write; idempotent."""

from __future__ import annotations

from app.core.errors import StatementError
from app.store.base import GraphStore

_ALREADY = ("already indexed", "already exists", "equivalent", "already created")


def ensure_kg_schema(store: GraphStore) -> list[str]:
    """Run every KG DDL statement of the store's dialect; returns those that ran."""
    ran = []
    for name in store.library.names():
        if name.startswith("ddl_") and "_kg_" in name:
            try:
                store.run(name)
                ran.append(name)
            except StatementError as exc:
                if not any(marker in str(exc).lower() for marker in _ALREADY):
                    raise
    return ran
