"""Vector search over the chunks' embeddings: exact, in process (the default), or the store's own index.

``NEORAG_RETRIEVAL_VECTOR_BACKEND=memory`` keeps every chunk's unit vector in one float32 matrix and
answers a question with one matrix-vector product: exact cosine, and no index for the store to rebuild when
it loads its data (FalkorDB rebuilds its HNSW index at every start and after every crash: 79 of the 81 s of
a recovery at 100k chunks, docs/BENCHMARKS.md). From 20k chunks on, an int8 copy of the matrix is scanned
first (``app.retrieval.int8_prefilter``: ~1 ms instead of ~3 ms at 100k x 384 on a 2-core machine) and
only its head is re-scored in float32, so the scores stay exact.
Memory: 5 bytes x dimension per chunk per process (192 MB at 100k chunks of 384 dimensions; 4 below 20k).

The matrix is read from the chunks' stored embeddings. A refresh reads only the chunks it does not hold
(after an ingest or delete in this process at once, on the ingest's thread; after one elsewhere when the
chunk count changes, in the background):
a chunk id names its document, position and text digest, so the vector of a known id only changes when
the graph's embedding model does (``neorag reembed`` records the new one), and then everything is read
again. ``store`` runs ``chunk_vector_search`` against the store's vector index instead.
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np

from app.core.errors import StatementError
from app.retrieval.int8_prefilter import MIN_ROWS as PREFILTER_MIN_ROWS
from app.retrieval.int8_prefilter import Int8Codes
from app.retrieval.refreshing import RefreshingIndex, shared_index
from app.retrieval.topk import top_k_indices
from app.services.container import Services
from app.services.embedding_record import stored_record
from app.store.base import GraphStore

log = logging.getLogger(__name__)
EXTRAS_KEY = "retrieval_vectors"
PAGE = 2_000  # ids per read of embeddings


class DenseIndex:
    """Unit vectors of chunks, one row each; ``search`` is an exact cosine top-k."""

    def __init__(self, ids: list[str], matrix: np.ndarray, model: str | None) -> None:
        self.ids = ids
        self.matrix = matrix
        self.model = model
        self.rows = {cid: i for i, cid in enumerate(ids)}
        # large indexes: an int8 first pass picks the rows the exact product re-scores (int8_prefilter)
        self.codes = Int8Codes.of(matrix) if len(ids) >= PREFILTER_MIN_ROWS else None

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def dimension(self) -> int:
        return int(self.matrix.shape[1]) if self.ids else 0

    def _unit_query(self, embedding: list[float]) -> np.ndarray | None:
        """``embedding`` as a float32 unit vector (a zero vector stays zero); None when its dimension is not
        the chunk vectors'."""
        query = np.asarray(embedding, dtype=np.float32)
        if query.shape != (self.dimension,):
            return None
        norm = float(np.linalg.norm(query))
        return query / norm if norm > 0 else query

    def search(self, embedding: list[float], k: int) -> list[tuple[str, float]]:
        """Top-k (chunk id, (1 + cos) / 2), best first, ties by id (the stores' statement's order)."""
        if not self.ids or k <= 0:
            return []
        query = self._unit_query(embedding)
        if query is None:
            raise StatementError(
                f"question vector has {len(embedding)} dimensions, the chunk vectors {self.dimension}")
        rows = self.codes.top_rows(query, k) if self.codes is not None else None  # None: every row
        cosines = self.matrix @ query if rows is None else self.matrix[rows] @ query
        k = min(k, len(cosines))
        top = top_k_indices(cosines, k)
        pairs = zip(unit_scores(cosines[top]), (top if rows is None else rows[top]).tolist(), strict=True)
        return [(self.ids[i], s) for s, i in sorted(pairs, key=lambda p: (-p[0], self.ids[p[1]]))]

    def scores(self, ids: list[str], embedding: list[float]) -> dict[str, float]:
        """(1 + cos) / 2 of the given chunks (those this index holds) against ``embedding``: the
        candidates' vector scores without a store round trip."""
        rows = [(cid, self.rows[cid]) for cid in ids if cid in self.rows]
        query = self._unit_query(embedding)
        if not rows or query is None:
            return {}
        values = unit_scores(self.matrix[[r for _, r in rows]] @ query)
        return {cid: value for (cid, _), value in zip(rows, values, strict=True)}

    def memory_bytes(self) -> int:
        return int(self.matrix.nbytes) + (self.codes.nbytes if self.codes is not None else 0)


def unit_scores(cosines: np.ndarray) -> list[float]:
    """Cosines as the stores' vector scores: (1 + cos) / 2, clamped to [0, 1]."""
    return np.clip((1.0 + cosines) / 2.0, 0.0, 1.0).tolist()  # type: ignore[no-any-return]


def unit_rows(vectors: list[list[float]]) -> np.ndarray:
    """The vectors as float32 rows of length 1 (a zero vector stays zero)."""
    matrix = np.asarray(vectors, dtype=np.float32)
    if matrix.ndim != 2:
        raise StatementError("the chunks' stored embeddings do not all have the same dimension")
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.where(norms > 0, norms, 1.0)


class VectorIndex(RefreshingIndex[DenseIndex]):
    """The process's exact vector index over the store's chunks, kept fresh like the BM25 index."""

    label, slug = "vector index", "vectors"

    def __init__(self, store: GraphStore, check_every_s: float = 5.0, page: int = PAGE) -> None:
        super().__init__(store, check_every_s)
        self.page = page
        self.read = 0  # embeddings read from the store by the last build

    def _load(self) -> tuple[DenseIndex, int, dict[str, Any]]:
        """Ids with an embedding; vectors kept from the served index, the others read in pages."""
        chunks = self._count()  # read first: a chunk written meanwhile makes the next check rebuild
        record = stored_record(self.store)
        model = str(record["model"]) if record else None
        ids = [str(r["id"]) for r in self.store.run("retrieval_chunk_vector_ids")]
        old = self.index if self.index is not None and self.index.model == model else None
        known = old.rows if old is not None else {}
        kept = [cid for cid in ids if cid in known]
        parts = [old.matrix[[known[cid] for cid in kept]]] if old is not None and kept else []
        order = list(kept)
        missing = [cid for cid in ids if cid not in known]
        for start in range(0, len(missing), self.page):
            rows = self.store.run("retrieval_chunk_vectors", {"ids": missing[start:start + self.page]})
            if rows:
                parts.append(unit_rows([r["embedding"] for r in rows]))
                order.extend(str(r["id"]) for r in rows)
        if len({p.shape[1] for p in parts}) > 1:
            raise StatementError("the chunks' stored embeddings do not all have the same dimension")
        matrix = np.vstack(parts) if parts else np.zeros((0, 0), dtype=np.float32)
        return DenseIndex(order, matrix, model), chunks, {"read": len(order) - len(kept)}

    def mark_stale(self, *_: Any, **__: Any) -> None:
        """Ingest listener: read the new chunks now, on the ingest's thread (only what the index lacks:
        the id list and the new vectors), so a question asked after an ingest or delete finds what it
        wrote. Before the first build, or when that read fails, the next question rebuilds instead."""
        if self.index is None:
            self.stale = True
            return
        try:
            self.build()
        except Exception as exc:  # noqa: BLE001 - the listener never fails the ingest
            log.warning("%s refresh after an ingest failed (the next question rebuilds it): %s",
                        self.label, exc)
            self.stale = True

    def _sizes(self, index: DenseIndex | None) -> dict[str, int]:
        return {"chunks": len(index) if index else 0, "dimension": index.dimension if index else 0}

    def search(self, embedding: list[float], k: int) -> list[tuple[str, float]]:
        return self.current().search(embedding, k)


def vector_index(extras: dict[str, Any], store: GraphStore) -> VectorIndex:
    """The in-process vector index kept in ``extras`` (registers itself as an ingest listener)."""
    return shared_index(extras, EXTRAS_KEY, lambda: VectorIndex(store))


def vector_search(services: Services, embedding: list[float], k: int) -> list[dict[str, Any]]:
    """Top-k chunks ``{id, score}`` by cosine, score (1 + cos) / 2, from the configured backend."""
    if services.settings.retrieval_vector_backend == "memory":
        hits = vector_index(services.extras, services.store).search(embedding, k)
        return [{"id": cid, "score": score} for cid, score in hits]
    return services.store.run("chunk_vector_search", {"embedding": embedding, "k": k})


def served_vectors(services: Services) -> DenseIndex | None:
    """The in-process vector index while it is fresh (None with ``store``, before its first build, or
    after an ingest or delete until its rebuild is done: the store then scores, and so drops deleted
    chunks)."""
    if services.settings.retrieval_vector_backend != "memory":
        return None
    idx = services.extras.get(EXTRAS_KEY)
    return idx.index if idx is not None and idx.fresh else None


def vector_index_stats(services: Services) -> dict[str, Any] | None:
    """The in-process index's sizes for /diagnostics (None before its first use or with ``store``)."""
    idx = services.extras.get(EXTRAS_KEY)
    return idx.stats() if idx is not None else None
