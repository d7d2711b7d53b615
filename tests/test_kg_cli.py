"""``neorag kg load`` through the real CLI (typer CliRunner) against both session stores."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from app.cli import cli
from app.kg.graph import list_datasets
from tests.support.backends import Backend
from tests.support.kg import PQ, ROG, kg_settings


def test_kg_load_reports_progress_and_is_idempotent(backend: Backend,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    settings = kg_settings(backend)
    backend.claim(settings.graph_name)
    for key, value in backend.env(settings).items():
        monkeypatch.setenv(key, value)
    runner = CliRunner()
    store = backend.open_store(settings)
    try:
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
    finally:
        backend.drop(settings.graph_name)
        store.close()
