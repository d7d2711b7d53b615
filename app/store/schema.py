"""Schema v1 bootstrap: constraints and indexes before any write, dimension checks."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Protocol

from app.core.errors import StatementError
from app.store.cypher_library import CypherLibrary

log = logging.getLogger(__name__)

DDL_PREFIX = "ddl_"
VECTOR_DDL = "ddl_80_chunk_vector"
REQUIRED_STATEMENTS = (
    "ping", "index_state", "count_nodes_by_label", "count_rels_by_type", "chunk_vector_search",
    "chunk_fulltext_search", "chunk_set_embeddings", "document_upsert", "chunk_upsert", VECTOR_DDL,
    "chunk_vector_drop",
)
_ALREADY = ("already indexed", "already exists", "equivalent", "already created")


class SchemaStore(Protocol):
    """What the schema functions need of a store (``GraphStore`` has it; base.py imports this module)."""

    library: CypherLibrary

    def run(self, name: str, params: dict[str, Any] | None = None) -> list[dict[str, Any]]: ...


@dataclass
class IndexInfo:
    """One index as reported by the store."""

    name: str
    type: str
    label: str | None
    property: str | None
    state: str
    dimension: int | None

    def as_dict(self) -> dict[str, Any]:
        return self.__dict__.copy()


def ddl_statements(store: SchemaStore) -> list[str]:
    """Names of the dialect's DDL statements in the order they run."""
    return [n for n in store.library.names() if n.startswith(DDL_PREFIX)]


def list_indexes(store: SchemaStore) -> list[IndexInfo]:
    """The store's indexes, normalised across dialects."""
    out = []
    for row in store.run("index_state"):
        dim = row.get("dimension")
        out.append(IndexInfo(
            name=str(row.get("name")), type=str(row.get("type")).upper(), label=row.get("label"),
            property=row.get("property"), state=str(row.get("state")).upper(),
            dimension=int(dim) if dim is not None else None,
        ))
    return out


def vector_index_dimension(store: SchemaStore) -> int | None:
    """The dimension of the chunk vector index, or None when absent."""
    for idx in list_indexes(store):
        if idx.type == "VECTOR" and idx.label == "Chunk" and idx.property == "embedding":
            return idx.dimension
    return None


def bootstrap_schema(store: SchemaStore, embedding_dim: int, vector_index: bool = True) -> list[str]:
    """Create every constraint/index idempotently; never recreates a mismatched vector index.

    Without ``vector_index`` (vectors searched in process on a store that rebuilds the index at every
    load) the chunk vector index is not created, and one left by an earlier version is dropped."""
    store.library.require(REQUIRED_STATEMENTS)
    existing_dim = vector_index_dimension(store)
    ran = []
    if not vector_index and existing_dim is not None:
        store.run("chunk_vector_drop")
        log.info("dropped the store's chunk vector index: vectors are searched in process")
        ran.append("chunk_vector_drop")
    for name in ddl_statements(store):
        if name == VECTOR_DDL and not vector_index:
            continue
        if name == VECTOR_DDL and existing_dim is not None:
            if existing_dim != embedding_dim:
                log.error(
                    "vector index dimension %s differs from the embedder's %s; vectors will not be mixed. "
                    "Re-ingest into a fresh graph (NEORAG_GRAPH_NAME) or switch NEORAG_EMBEDDING_MODEL back.",
                    existing_dim, embedding_dim,
                )
            continue
        try:
            store.run(name, {"dim": embedding_dim} if name == VECTOR_DDL else {})
            ran.append(name)
        except StatementError as exc:
            if any(marker in str(exc).lower() for marker in _ALREADY):
                continue
            raise
    return ran
