"""The in-process vector index (NEORAG_RETRIEVAL_VECTOR_BACKEND=memory, the default) on both stores:
the same neighbours and scores as the store's own index, refreshes that read only new chunks, no FalkorDB
vector index (its rebuild at every load made crash recovery take 81 s at 100k chunks), and failures that
degrade a query instead of failing it."""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest

from app.core.errors import StatementError
from app.retrieval import options_from_settings, retrieve
from app.retrieval.state import retrieval_diagnostics
from app.retrieval.vectors import DenseIndex, VectorIndex, vector_index, vector_search
from app.services.embedding_record import record_model
from app.store.base import GraphStore
from app.store.factory import make_store
from app.store.schema import vector_index_dimension
from tests.support.backends import Backend
from tests.support.ingest_graph import make_services

DIM = 384


def vectors(n: int, seed: int = 7) -> list[list[float]]:
    rng = random.Random(seed)
    return [[rng.gauss(0.0, 1.0) for _ in range(DIM)] for _ in range(n)]


def add_chunks(store: GraphStore, ids: list[str], embeddings: list[list[float]],
               texts: list[str] | None = None) -> None:
    store.run("document_upsert", {"rows": [{"id": "d1", "title": "T", "source": "s.txt", "props": {}}]})
    texts = texts or [f"text of {cid}" for cid in ids]
    store.run_batched("chunk_upsert", [{"id": cid, "doc_id": "d1", "text": texts[i], "hash": cid,
                                         "source": "s.txt", "seq": i, "title": "T", "pos": i}
                                        for i, cid in enumerate(ids)])
    store.run_batched("chunk_set_embeddings", [{"id": cid, "embedding": e}
                                                for cid, e in zip(ids, embeddings, strict=True)])


def test_memory_search_is_exact_and_scores_like_the_store_index(backend: Backend, settings, store,  # type: ignore[no-untyped-def]
                                                                 embedder) -> None:
    store.keep_vector_index = True  # both searches on one graph: the store's index as well
    store.bootstrap(DIM)
    ids = [f"c{i:04d}" for i in range(400)]
    stored = vectors(400)
    add_chunks(store, ids, stored)
    services = make_services(settings, store, embedder)
    unit = np.asarray(stored) / np.linalg.norm(stored, axis=1, keepdims=True)
    for n, noise in enumerate(vectors(8, seed=99)):
        probe = [a + 0.3 * b for a, b in zip(stored[n * 40], noise, strict=True)]  # near chunk n * 40
        mine = vector_search(services, probe, 10)
        exact = np.argsort(-(unit @ (np.asarray(probe) / np.linalg.norm(probe))))[:10]
        assert [h["id"] for h in mine] == [ids[i] for i in exact]
        rows = store.run("chunk_vector_search", {"embedding": probe, "k": 10})
        theirs = {h["id"]: h["score"] for h in rows}
        assert mine[0]["id"] == ids[n * 40] and ids[n * 40] in theirs
        # the store's HNSW is approximate (random 384-d vectors are its worst case): the ids both return
        # score the same
        assert all(abs(h["score"] - theirs[h["id"]]) < 1e-5 for h in mine if h["id"] in theirs)
        assert all(0.0 <= h["score"] <= 1.0 for h in mine)


def test_a_refresh_reads_only_the_chunks_it_lacks(settings, store, embedder) -> None:  # type: ignore[no-untyped-def]
    store.bootstrap(DIM)
    record_model(store, "model-a", DIM)
    first = vectors(50)
    add_chunks(store, [f"a{i:02d}" for i in range(50)], first)
    index = VectorIndex(store, page=16)  # several pages
    built = index.build()
    assert len(built) == 50 and index.read == 50 and built.dimension == DIM
    add_chunks(store, [f"b{i:02d}" for i in range(5)], vectors(5, seed=3))
    store.run("ingest_chunk_delete", {"rows": [{"id": "a00"}, {"id": "a01"}]})
    again = index.build()
    assert index.read == 5 and len(again) == 53 and "a00" not in again.rows
    assert again.search(first[7], 1)[0][0] == "a07"  # kept rows still line up with their ids
    record_model(store, "model-b", DIM)  # `neorag reembed` records another model: everything is read again
    index.build()
    assert index.read == 53


def test_falkordb_keeps_no_vector_index_by_default(backend: Backend, settings) -> None:  # type: ignore[no-untyped-def]
    store = make_store(settings)
    try:
        kept = not store.capabilities().vector_index_rebuilt_at_load
        assert store.keep_vector_index is kept and kept is (backend.name == "neo4j")
        store.bootstrap(DIM)
        assert (vector_index_dimension(store) == DIM) is kept
        store.run("ddl_80_chunk_vector", {"dim": DIM})  # e.g. made by an earlier NeoRAG version
        ran = store.bootstrap(DIM)
        assert ("chunk_vector_drop" in ran) is not kept
        assert (vector_index_dimension(store) == DIM) is kept
        with_store_index = make_store(settings.model_copy(update={"retrieval_vector_backend": "store"}))
        assert with_store_index.keep_vector_index is True
        with_store_index.close()
    finally:
        store.close()


def test_retrieval_uses_the_memory_index_and_reports_it(settings, store, embedder) -> None:  # type: ignore[no-untyped-def]
    store.bootstrap(DIM)
    texts = ["Basel sits on the Rhine river.", "Ada Lovelace wrote about the Analytical Engine."]
    add_chunks(store, ["c0", "c1"], embedder.encode_raw(texts), texts)
    services = make_services(settings, store, embedder)
    result = retrieve(services, "Which city lies on the Rhine?", options_from_settings(services, 2))
    assert not result.degraded, result.degraded_reasons
    assert result.candidates[0].id == "c0" and result.candidates[0].vector_rank == 1
    diag = retrieval_diagnostics(services)
    assert diag["vector_backend"] == "memory"
    assert diag["vector_index"]["chunks"] == 2 and diag["vector_index"]["dimension"] == DIM


def test_a_failed_vector_read_degrades_the_query(settings, store, embedder,  # type: ignore[no-untyped-def]
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    store.bootstrap(DIM)
    texts = ["Basel sits on the Rhine river.", "Ada Lovelace wrote about the Analytical Engine."]
    add_chunks(store, ["c0", "c1"], embedder.encode_raw(texts), texts)
    services = make_services(settings, store, embedder)
    run = store.run

    def failing(name: str, params: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        if name == "retrieval_chunk_vectors":
            raise StatementError("the store refused the read", "injected")
        return run(name, params)

    monkeypatch.setattr(store, "run", failing)
    result = retrieve(services, "Which city lies on the Rhine?", options_from_settings(services, 2))
    assert result.degraded and "vector index unavailable" in result.degraded_reasons[0]
    assert result.top and result.top[0].id == "c0"  # BM25 still finds it
    monkeypatch.setattr(store, "run", run)
    vector_index(services.extras, store).stale = True
    again = retrieve(services, "Which city lies on the Rhine?", options_from_settings(services, 2))
    assert not again.degraded and again.top[0].vector_rank == 1


def test_a_question_of_another_dimension_is_refused() -> None:
    index = DenseIndex(["a"], np.eye(1, 2, dtype=np.float32), None)
    assert index.search([1.0, 0.0], 3) == [("a", 1.0)]
    with pytest.raises(StatementError, match="3 dimensions"):
        index.search([1.0, 0.0, 0.0], 1)
    assert DenseIndex([], np.zeros((0, 0), dtype=np.float32), None).search([1.0], 5) == []


def test_the_server_warms_the_indexes_at_start(settings, store, embedder) -> None:  # type: ignore[no-untyped-def]
    from app.retrieval.bm25 import EXTRAS_KEY as BM25_KEY
    from app.retrieval.startup import warm_indexes
    from app.retrieval.vectors import EXTRAS_KEY

    store.bootstrap(DIM)
    add_chunks(store, ["c0", "c1"], vectors(2))
    services = make_services(settings, store, embedder)
    warm_indexes(services)
    assert len(services.extras[EXTRAS_KEY].index) == 2 and len(services.extras[BM25_KEY].index) == 2
    cold = make_services(settings.model_copy(update={"retrieval_vector_backend": "store"}), store, embedder)
    warm_indexes(cold)
    assert EXTRAS_KEY not in cold.extras  # only the indexes the settings use


def test_serve_starts_warming_unless_switched_off(settings, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    import app.api.main as main
    from tests.support.apps import app_client

    started: list[object] = []
    monkeypatch.setattr(main, "start_warming", started.append)
    with app_client(settings):
        assert len(started) == 1
    with app_client(settings.model_copy(update={"retrieval_warm_start": False})):
        assert len(started) == 1


def test_an_empty_index_is_rebuilt_before_it_answers(settings, store) -> None:  # type: ignore[no-untyped-def]
    """Warmed at start on an empty graph, then an ingest: the first question must not get the empty index
    while the rebuild runs in the background (later rebuilds do serve the old index meanwhile)."""
    store.bootstrap(DIM)
    index = VectorIndex(store)
    assert len(index.current()) == 0
    add_chunks(store, ["c0", "c1"], vectors(2))
    index.mark_stale()  # the ingest listener
    assert len(index.current()) == 2


def test_candidates_are_scored_in_process_while_the_index_is_fresh(settings, store, embedder,  # type: ignore[no-untyped-def]
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    store.bootstrap(DIM)
    texts = ["Basel sits on the Rhine river.", "Ada Lovelace wrote about the Analytical Engine.",
             "Cologne lies on the Rhine as well."]
    add_chunks(store, ["c0", "c1", "c2"], embedder.encode_raw(texts), texts)
    services = make_services(settings, store, embedder)
    question = "Which cities lie on the Rhine?"
    first = retrieve(services, question, options_from_settings(services, 3))  # builds the indexes
    names: list[str] = []
    run = store.run

    def recording(name: str, params: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        names.append(name)
        return run(name, params)

    monkeypatch.setattr(store, "run", recording)
    again = retrieve(services, question, options_from_settings(services, 3))
    assert "retrieval_chunk_scores" not in names and "retrieval_chunk_details" not in names, names
    emb = embedder.encode_raw([question])[0]
    by_store = {r["id"]: r["score"] for r in run("retrieval_chunk_scores", {"ids": ["c0", "c1", "c2"],
                                                                            "embedding": emb})}
    assert {c.id for c in again.candidates} == {c.id for c in first.candidates}
    assert all(abs(c.score_raw - by_store[c.id]) < 1e-5 for c in again.candidates)
    # a delete by another process: the chunk count check marks the index stale, and until its rebuild
    # (in the background) the store scores the candidates, so the deleted chunk is dropped
    run("ingest_chunk_delete", {"rows": [{"id": "c2"}]})
    vector_index(services.extras, store).stale = True
    after = retrieve(services, question, options_from_settings(services, 3))
    assert "c2" not in {c.id for c in after.candidates}


def test_an_ingest_in_this_process_is_searchable_at_once(settings, store) -> None:  # type: ignore[no-untyped-def]
    store.bootstrap(DIM)
    add_chunks(store, ["c0"], vectors(1))
    index = VectorIndex(store)
    index.build()
    fresh = vectors(1, seed=11)
    add_chunks(store, ["c1"], fresh)
    index.mark_stale()  # the ingest listener: reads the new chunk on the ingest's thread
    assert index.fresh and index.read == 1 and index.index is not None
    assert index.index.search(fresh[0], 1)[0][0] == "c1"
    store.run("ingest_chunk_delete", {"rows": [{"id": "c0"}]})
    index.mark_stale()  # a delete: gone at once
    assert list(index.index.rows) == ["c1"]


def test_warming_stops_before_the_store_closes(settings, store, embedder) -> None:  # type: ignore[no-untyped-def]
    import threading

    from app.retrieval.startup import Warming, warm_indexes
    from app.retrieval.vectors import EXTRAS_KEY

    store.bootstrap(DIM)
    add_chunks(store, ["c0"], vectors(1))
    services = make_services(settings, store, embedder)
    stop = threading.Event()
    stop.set()  # shutting down: no build is started
    warm_indexes(services, stop)
    assert services.extras[EXTRAS_KEY].index is None
    assert Warming(services).finish() is True  # the thread is joined: no read left in flight
