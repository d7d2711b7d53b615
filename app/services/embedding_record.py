"""Which embedding model made a graph's chunk vectors: recorded, checked, and re-made (``neorag reembed``).

The graph keeps one ``(:NeoragMeta {key: 'embedding'})`` node with ``model`` and ``dimension``. Ingest
records it; ingest and retrieval refuse to mix vectors of another model (two models of the same
dimension would silently give meaningless similarities) with a message naming the re-embed command.
A graph written before this record existed is adopted when its vector index has the embedder's dimension.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from app.core.errors import ConfigError
from app.store.base import GraphStore

REEMBED_HINT = (
    "run `neorag reembed` to re-encode every chunk with {model}, or set NEORAG_EMBEDDING_MODEL={stored}"
)
_CACHE_KEY = "embedding_record_checked"


def canonical_model(name: str) -> str:
    """The recorded name of a model setting ('sentence-transformers/x' and 'x' are the same model)."""
    return name.removeprefix("sentence-transformers/")


def stored_record(store: GraphStore) -> dict[str, Any] | None:
    """``{model, dimension}`` recorded in the graph, or None."""
    rows = store.run("meta_embedding_get")
    return dict(rows[0]) if rows and rows[0].get("model") else None


def record_model(store: GraphStore, model: str, dimension: int) -> None:
    """Record ``model`` / ``dimension`` as the graph's embedding model."""
    store.run("meta_embedding_set", {"model": canonical_model(model), "dimension": int(dimension)})


def mismatch_error(stored: dict[str, Any], model: str, dimension: int) -> ConfigError:
    """The refusal: the graph's vectors come from another model."""
    return ConfigError(
        f"the graph's chunk vectors were made with {stored['model']} ({stored['dimension']}-d), "
        f"NEORAG_EMBEDDING_MODEL is {canonical_model(model)} ({dimension}-d)",
        "vectors of two models cannot be compared",
        REEMBED_HINT.format(model=canonical_model(model), stored=stored["model"]),
    )


def check_model(store: GraphStore, model: str, dimension: int) -> dict[str, Any] | None:
    """Raise ``ConfigError`` when the graph records another model or dimension; returns the record."""
    stored = stored_record(store)
    if stored is not None and (
        stored["model"] != canonical_model(model) or int(stored["dimension"]) != int(dimension)
    ):
        raise mismatch_error(stored, model, dimension)
    return stored


def check_model_cached(extras: dict[str, Any], store: GraphStore, model: str, dimension: int,
                       max_age_s: float = 10.0) -> None:
    """``check_model`` at most every ``max_age_s`` per process (retrieval calls it per request)."""
    now = time.monotonic()
    last = extras.get(_CACHE_KEY)
    if last is not None and now - last < max_age_s:
        return
    check_model(store, model, dimension)
    extras[_CACHE_KEY] = now


def reembed(
    store: GraphStore,
    encode: Callable[[list[str]], list[list[float]]],
    model: str,
    dimension: int,
    batch_size: int = 256,
    progress: Callable[[int], None] | None = None,
) -> int:
    """Re-encode every chunk's text with ``encode`` and record ``model``; returns chunks re-embedded.

    The vector index is dropped and recreated when the dimension changes. Chunks are read in id order,
    ``batch_size`` at a time, and written with the same batched statement as ingest.
    """
    from app.store.schema import vector_index_dimension

    old_dim = vector_index_dimension(store)
    if old_dim is not None and old_dim != dimension:
        store.run("chunk_vector_drop")
    after, done = "", 0
    while True:
        rows = store.run("reembed_chunk_page", {"after": after, "limit": batch_size})
        if not rows:
            break
        vectors = encode([str(r.get("text") or "") for r in rows])
        store.run_batched("chunk_set_embeddings", [
            {"id": r["id"], "embedding": v} for r, v in zip(rows, vectors, strict=True)
        ])
        done += len(rows)
        after = str(rows[-1]["id"])
        if progress:
            progress(done)
    store.bootstrap(dimension)
    record_model(store, model, dimension)
    return done
