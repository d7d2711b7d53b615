"""Feature start-up hooks (/diagnostics has retrieval from the start) and the batched query embedder."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from app.core.config import Settings
from app.services import embedder as embedder_module
from app.services.container import FEATURE_STARTUPS
from app.services.embedder import Embedder, QueryBatcher
from tests.support.apps import app_client


def test_fresh_app_diagnostics_has_retrieval_section(settings: Settings) -> None:
    with app_client(settings) as client:
        body = client.get("/diagnostics").json()  # the first request of a fresh app
    assert "app.retrieval.startup" in FEATURE_STARTUPS
    section = body["retrieval"]
    assert section["fusion"] == settings.retrieval_fusion
    assert section["weights"]["bm25"] == settings.retrieval_bm25_weight
    assert section["quotas"] == {
        "max_nodes": settings.retrieval_max_nodes,
        "max_depth": settings.retrieval_max_depth,
        "depth2_reserve": settings.retrieval_depth2_reserve,
        "per_entity": settings.retrieval_per_entity_limit,
        "entity_max_freq": settings.retrieval_entity_max_freq,
        "seed_k": settings.retrieval_seed_k,
    }
    assert section["query_embedder"]["threads"] == settings.embedding_query_threads


def test_settings_change_shows_in_fresh_diagnostics(settings: Settings) -> None:
    custom = settings.model_copy(update={"retrieval_fusion": "rrf", "retrieval_max_nodes": 77})
    with app_client(custom) as client:
        section = client.get("/diagnostics").json()["retrieval"]
    assert section["fusion"] == "rrf" and section["quotas"]["max_nodes"] == 77


def test_query_batcher_batches_concurrent_texts(embedder: Embedder) -> None:
    batcher = QueryBatcher(embedder, threads=1, window_ms=50.0)
    texts = [f"batched question number {i} about films" for i in range(6)]
    embedder.clear_cache()
    futures = [batcher.submit(t) for t in texts]  # all queued within the 50 ms window
    vecs = [f.result(timeout=30) for f in futures]
    assert batcher.batches == 1 and batcher.texts == len(texts)
    direct = embedder.encode_raw(texts)
    for got, want in zip(vecs, direct, strict=True):
        assert max(abs(a - b) for a, b in zip(got, want, strict=True)) < 1e-4
    # cached now: resolved without the worker
    again = batcher.submit(texts[0])
    assert again.done() and again.result() == vecs[0] and batcher.batches == 1


def test_query_batcher_reports_its_start_up_work_until_done(embedder: Embedder) -> None:
    """``warming`` stays true until the encoder is chosen and every warm-up length encoded (a benchmark
    waits for it: that work takes CPU from requests)."""
    batcher = QueryBatcher(embedder, threads=1, window_ms=0.0, warm_words=3)
    try:
        deadline = time.monotonic() + 60
        while (stats := batcher.stats())["warming"]:
            assert time.monotonic() < deadline, "the batcher never finished its start-up work"
            time.sleep(0.02)
        assert stats["warmed_lengths"] == 3 and stats["encoder"]["ready"] is True
    finally:
        batcher.close()


def test_query_batcher_from_many_threads(embedder: Embedder) -> None:
    batcher = QueryBatcher(embedder, threads=1, window_ms=0.0)
    embedder.clear_cache()
    out: dict[int, list[float]] = {}

    def one(i: int) -> None:
        out[i] = batcher.submit(f"thread question {i % 5}").result(timeout=30)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(out) == 20 and batcher.batches <= 20
    for i in range(20):  # same text, same vector (up to padding noise when batched with longer texts)
        assert max(abs(a - b) for a, b in zip(out[i], out[i % 5], strict=True)) < 1e-4


def test_query_batcher_failure_reaches_every_caller(embedder: Embedder) -> None:
    class Broken(Embedder):
        def __init__(self) -> None:  # no model: encode fails
            self._cache, self._lock = embedder._cache.__class__(), threading.Lock()
            self.hits = self.misses = 0

        def encode_raw(self, texts: list[str]) -> list[list[float]]:
            raise RuntimeError("encoder broke")

    batcher = QueryBatcher(Broken(), threads=1, window_ms=20.0)
    futures = [batcher.submit(f"q{i}") for i in range(3)]
    for f in futures:
        with pytest.raises(RuntimeError, match="encoder broke"):
            f.result(timeout=10)
    # the worker survives a failed batch
    ok: Any = batcher.submit("q-after")
    with pytest.raises(RuntimeError):
        ok.result(timeout=10)


def test_a_batcher_never_idle_still_chooses_its_encoder(embedder: Embedder,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Under constant load the worker's queue is never empty; the encoder choice must still finish (else a
    busy server keeps the slow eager path for ever), and question vectors stay out of ingest's cache."""
    class ThreeSteps:  # an encoder choice of three steps
        def __init__(self, *_: Any) -> None:
            self.taken, self.encoder = 0, None

        def steps(self) -> Iterator[None]:
            for _ in range(3):
                time.sleep(0.05)  # a step takes a while (building a candidate, timing it)
                self.taken += 1
                yield

        def info(self) -> dict[str, Any]:
            return {"ready": self.taken == 3}

    class Slow(Embedder):
        def __init__(self) -> None:  # no model: 20 ms per batch, whatever its size
            self._cache, self._lock = embedder._cache.__class__(), threading.Lock()
            self.hits = self.misses = 0

        def encode_queries(self, texts: list[str]) -> list[list[float]]:
            time.sleep(0.02)
            return [[1.0, 0.0] for _ in texts]

    monkeypatch.setattr(embedder_module, "EncoderSelection", ThreeSteps)
    slow = Slow()
    batcher = QueryBatcher(slow, threads=0, window_ms=0.0, precision="fp32_traced")
    futures = []
    try:
        deadline = time.monotonic() + 30
        while not batcher.selection.info()["ready"]:  # a question every 4 ms: several per 20 ms batch
            assert time.monotonic() < deadline, "the encoder choice starved under constant load"
            futures.append(batcher.submit(f"question {len(futures)}"))
            time.sleep(0.004)
        assert all(f.result(timeout=30) == [1.0, 0.0] for f in futures)
        assert slow.cache_size() == 0 and len(batcher._fast_cache) == len(futures)
    finally:
        batcher.close()
