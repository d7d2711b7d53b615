"""``neorag kg load`` and ``neorag kg browse`` through the real CLI (typer CliRunner), both session stores."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from typer.testing import CliRunner

from app.cli import cli
from app.core.errors import BadInput
from app.kg.graph import list_datasets
from app.store.base import GraphStore
from tests.support.backends import Backend
from tests.support.ingest_graph import q
from tests.support.kg import PQ, ROG, kg_settings


@pytest.fixture
def kg_store(backend: Backend, monkeypatch: pytest.MonkeyPatch) -> Iterator[GraphStore]:
    """The KG test graph, claimed and empty, with the CLI's environment pointing at it."""
    settings = kg_settings(backend)
    backend.claim(settings.graph_name)
    for key, value in backend.env(settings).items():
        monkeypatch.setenv(key, value)
    store = backend.open_store(settings)
    try:
        yield store
    finally:
        backend.drop(settings.graph_name)
        store.close()


def test_kg_load_reports_progress_and_is_idempotent(kg_store: GraphStore) -> None:
    runner, store = CliRunner(), kg_store
    first = runner.invoke(cli, ["kg", "load", str(PQ / "PQ-2H.txt"), "--dataset", "pq2h"])
    assert first.exit_code == 0, first.output
    assert "1,908 samples loaded" in first.output and "triples/s" in first.output
    assert "1,908 samples, 28,755 triples (" in first.output  # the progress line
    again = runner.invoke(cli, ["kg", "load", str(PQ / "PQ-2H.txt"), "--dataset", "pq2h"])
    assert again.exit_code == 0 and "0 samples loaded" in again.output and "1,908 skipped" in again.output
    swap = runner.invoke(cli, ["kg", "load", str(ROG), "--dataset", "webqsp", "--replace"])
    assert swap.exit_code == 0 and "3 samples loaded" in swap.output
    swap = runner.invoke(cli, ["kg", "load", str(ROG), "--dataset", "webqsp", "--replace"])
    assert swap.exit_code == 0 and "3 replaced" in swap.output
    assert {d["name"]: d["samples"] for d in list_datasets(store)} == {"pq2h": 1908, "webqsp": 3}
    bad = runner.invoke(cli, ["kg", "load", str(PQ / "nope.txt"), "--dataset", "x"])
    assert bad.exit_code != 0 and "does not exist" in str(bad.exception)
    missing = runner.invoke(cli, ["kg", "load", str(ROG)])
    assert missing.exit_code == 2 and "--dataset" in missing.output


def test_kg_browse_writes_one_samples_edges(kg_store: GraphStore) -> None:
    """`neorag kg browse DATASET SAMPLE_ID`: a default load writes no KG_FACT edges; browse writes the
    sample's (and only its), says how to draw it, and refuses a sample that is not loaded."""
    runner, store = CliRunner(), kg_store
    edges = "MATCH ()-[f:KG_FACT]->() RETURN f.sample AS s, count(f) AS n"
    loaded = runner.invoke(cli, ["kg", "load", str(ROG), "--dataset", "webqsp"])
    assert loaded.exit_code == 0, loaded.output
    assert q(store, edges) == []
    n_triples = q(store, "MATCH (s:KGSample {key: 'webqsp/WebQTrn-1'}) RETURN s.n_triples AS n")[0]["n"]
    done = runner.invoke(cli, ["kg", "browse", "webqsp", "WebQTrn-1"])
    assert done.exit_code == 0, done.output
    assert f"{n_triples:,} KG_FACT edges written" in done.output and "kg_sample.cypher" in done.output
    assert q(store, edges) == [{"s": "webqsp/WebQTrn-1", "n": n_triples}] and n_triples > 0
    unknown = runner.invoke(cli, ["kg", "browse", "webqsp", "WebQTrn-999"])
    assert isinstance(unknown.exception, BadInput) and "WebQTrn-999" in str(unknown.exception)
