"""Stage 3, embed: batched embeddings through the shared (cached) embedder, dimension-checked."""

from __future__ import annotations

from collections.abc import Sequence

from app.core.errors import ConfigError
from app.services.embedder import Embedder
from app.services.embedding_record import check_model
from app.store.base import GraphStore
from app.store.schema import vector_index_dimension


def check_dimension(store: GraphStore, embedder: Embedder) -> int:
    """The embedder's dimension; ConfigError (one line) when the graph records another embedding model
    (``app.services.embedding_record``) or its vector index has another dimension."""
    check_model(store, embedder.model_name, embedder.dimension)
    stored = vector_index_dimension(store)
    if stored is not None and stored != embedder.dimension:
        raise ConfigError(
            f"embedding dimension {embedder.dimension} ({embedder.model_name}) differs from the "
            f"vector index's {stored}",
            "vectors of two sizes cannot share one index",
            "run `neorag reembed`, ingest into a fresh graph (NEORAG_GRAPH_NAME) or switch "
            "NEORAG_EMBEDDING_MODEL back",
        )
    return embedder.dimension


def embed_texts(embedder: Embedder, texts: Sequence[str], batch_size: int | None = None) -> list[list[float]]:
    """Unit vectors for ``texts`` (cache keyed by content hash, encode batch ``batch_size``); checks sizes."""
    vectors = embedder.embed(list(texts), batch_size)
    for vec in vectors:
        if len(vec) != embedder.dimension:
            raise ConfigError(f"embedder returned a {len(vec)}-d vector, expected {embedder.dimension}")
    return vectors
