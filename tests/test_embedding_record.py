"""The graph records its embedding model; ingest and retrieval refuse another; `neorag reembed` fixes it."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from app.cli import cli
from app.core.errors import ConfigError
from app.retrieval import options_from_settings, retrieve
from app.services.embedding_record import record_model, reembed, stored_record
from app.store.schema import vector_index_dimension
from ingest.options import IngestOptions
from ingest.pipeline import ingest_path
from tests.support.apps import app_client
from tests.support.backends import Backend
from tests.support.ingest_graph import make_services, q

TEXT = (
    "The Rhine is a river that flows from the Swiss Alps to the North Sea. Basel sits on the Rhine.\n\n"
    "Ada Lovelace wrote notes on the Analytical Engine of Charles Babbage in 1843."
)


def test_another_model_is_refused_until_reembed(settings, store, embedder, tmp_path,  # type: ignore[no-untyped-def]
                                               backend: Backend,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "notes.txt").write_text(TEXT)
    services = make_services(settings, store, embedder)
    ingest_path(services, tmp_path / "notes.txt", IngestOptions(checkpoint=False))
    assert stored_record(store) == {"model": "all-MiniLM-L6-v2", "dimension": 384}
    # the graph now says its vectors came from another 384-d model: same dimension, different space
    record_model(store, "multilingual-e5-small", 384)
    with pytest.raises(ConfigError) as ingest_err:
        ingest_path(services, tmp_path / "notes.txt", IngestOptions(checkpoint=False))
    assert "multilingual-e5-small" in str(ingest_err.value) and "neorag reembed" in str(ingest_err.value)
    with pytest.raises(ConfigError, match="neorag reembed"):
        retrieve(make_services(settings, store, embedder), "Where does the Rhine flow?",
                 options_from_settings(services, 3))
    with app_client(settings) as client:
        resp = client.post("/ranking/preview", json={"question": "Where does the Rhine flow?"})
        assert resp.status_code == 503
        assert resp.json()["error"] == "misconfigured" and "neorag reembed" in resp.json()["message"]
    # `neorag reembed` re-encodes every chunk with the configured model and records it
    for key, value in backend.env(settings).items():
        monkeypatch.setenv(key, value)
    store._execute("MATCH (c:Chunk) SET c.embedding = NULL", {}, True)
    result = CliRunner().invoke(cli, ["reembed", "--graph", settings.graph_name, "--batch-size", "1"])
    assert result.exit_code == 0, result.output
    assert "was multilingual-e5-small (384-d)" in result.output
    assert stored_record(store) == {"model": "all-MiniLM-L6-v2", "dimension": 384}
    rows = q(store, "MATCH (c:Chunk) RETURN c.text AS text, c.embedding AS emb ORDER BY c.id")
    assert rows and all(r["emb"] is not None for r in rows)
    expected = embedder.encode_raw([r["text"] for r in rows])
    for row, vec in zip(rows, expected, strict=True):
        assert sum(a * b for a, b in zip(row["emb"], vec, strict=True)) > 0.999
    found = retrieve(make_services(settings, store, embedder), "Where does the Rhine flow?",
                     options_from_settings(services, 3))
    assert found.top and "Rhine" in found.top[0].text


@pytest.mark.pristine_schema  # it makes a 16-d vector index (Neo4j: no 384-d one left from another test)
def test_reembed_recreates_the_vector_index_for_another_dimension(store, embedder) -> None:  # type: ignore[no-untyped-def]
    store.keep_vector_index = True  # the store's own index, as with NEORAG_RETRIEVAL_VECTOR_BACKEND=store
    store.bootstrap(16)
    store.run("document_upsert", {"rows": [{"id": "d1", "title": "Basel", "source": "s", "props": {}}]})
    store.run("chunk_upsert", {"rows": [{"id": "c1", "doc_id": "d1", "text": "Basel sits on the Rhine.",
                                         "hash": "h", "source": "s", "seq": 0, "title": "Basel", "pos": 0}]})
    store.run("chunk_set_embeddings", {"rows": [{"id": "c1", "embedding": [0.25] * 16}]})
    record_model(store, "tiny-16", 16)
    assert vector_index_dimension(store) == 16
    done = reembed(store, embedder.encode_raw, embedder.model_name, embedder.dimension, batch_size=10)
    assert done == 1 and vector_index_dimension(store) == 384
    assert stored_record(store) == {"model": "all-MiniLM-L6-v2", "dimension": 384}
    vec = embedder.encode_raw(["Which city is on the Rhine?"])[0]
    hits = store.run("chunk_vector_search", {"embedding": vec, "k": 1})
    assert [h["id"] for h in hits] == ["c1"]
