"""`neorag eval retrieval` end to end on a 6-question HotpotQA slice (its own graph, no LLM)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from app.cli import cli
from app.evaluation.retrieval_eval import METHODS, load_dataset, recall_at
from tests.support.backends import Backend

DATASET = Path(__file__).parent / "fixtures" / "retrieval" / "hotpot_eval"


@contextmanager
def eval_run(backend: Backend, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, dataset: str,
             path: Path) -> Iterator[tuple[Result, dict[str, Any], str]]:
    """`neorag eval retrieval --dataset D PATH` into a graph of its own on ``backend``: (the CLI result, the
    JSON report, the graph); the graph is dropped afterwards."""
    graph = f"t_eval_{uuid.uuid4().hex[:8]}"
    backend.claim(graph)
    for key, value in backend.env(backend.settings(graph)).items():
        monkeypatch.setenv(key, value)
    out = tmp_path / "report.json"
    args = ["eval", "retrieval", "--dataset", dataset, str(path), "--graph", graph, "--json-out", str(out)]
    result = CliRunner().invoke(cli, args)
    try:
        assert result.exit_code == 0, result.output
        yield result, json.loads(out.read_text()), graph
    finally:
        backend.drop(graph)


def test_recall_arithmetic_and_loader() -> None:
    ranked = [("d1", "A"), ("d2", "B"), ("d3", "C")]
    assert recall_at(ranked, {"title:A", "title:C"}, 2) == 0.5
    assert recall_at(ranked, {"title:A", "d3"}, 3) == 1.0
    questions, corpus = load_dataset("hotpotqa", DATASET)
    assert len(questions) == 6 and corpus.name == "hotpotqa_questions.json"
    assert questions[0].support_titles == ["Alû", "Lilu (mythology)"]


def test_eval_retrieval_command(backend: Backend, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    with eval_run(backend, monkeypatch, tmp_path, "hotpotqa", DATASET) as (result, report, graph):
        assert report["questions"] == 6 and report["chunks"] > 60 and report["graph"] == graph
        assert set(report["recall"]) == set(METHODS)
        for method in METHODS:
            r = report["recall"][method]
            assert 0.0 <= r["@2"] <= r["@5"] <= r["@10"] <= 1.0
        assert report["recall"]["hybrid+graph"]["@10"] >= 0.75
        assert "hybrid+graph" in result.output and "R@5" in result.output
        bad = CliRunner().invoke(cli, ["eval", "retrieval", "--dataset", "nq", str(DATASET)])
        assert bad.exit_code != 0


MULTIHOP = Path(__file__).parent / "fixtures" / "retrieval" / "hotpot_multihop"


def test_default_pipeline_beats_every_single_retriever(
    backend: Backend, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """30 HotpotQA questions (300 paragraphs), default settings: the default pipeline must rank more
    supporting paragraphs in its top 2 and top 5 than vector search and BM25 alone (the same run)."""
    with eval_run(backend, monkeypatch, tmp_path, "hotpotqa", MULTIHOP) as (result, report, _):
        r = report["recall"]
        assert report["questions"] == 30 and report["chunks"] >= 300
        for single in ("vector", "bm25"):
            for k in ("@2", "@5"):
                assert r["default"][k] > r[single][k], (single, k, r)
        assert report["default_beats_single_retrievers"] is True
        # the graph stays small: bounded CO_OCCURS (<= 20 relationships per chunk in all)
        assert report["graph_size"]["per_chunk"] <= 20
        assert set(report["p50_ms"]) == set(METHODS) and "multihop-bridge" in result.output
        # Wikipedia titles: the auto graph mode runs the multi-hop stage, so default and multihop agree
        assert report["default_graph_mode"] == "multihop" and r["default"] == r["multihop"]
        assert "default graph mode: multihop" in result.output


TWOWIKI = Path(__file__).parent / "fixtures" / "retrieval" / "twowiki_eval"


def test_2wiki_records_load_with_their_supporting_paragraphs() -> None:
    from ingest.load import load_file

    questions, corpus = load_dataset("2wiki", TWOWIKI)
    assert [q.support_titles for q in questions] == [["Ermengarde of Tours", "Lothair II"],
                                                     ["Aas Ka Panchhi", "Phoolwari"]]
    titles = [d.title for d in load_file(corpus).docs]  # the records' own context paragraphs are the corpus
    assert len(titles) == 9 and {t for q in questions for t in q.support_titles} <= set(titles)


def test_eval_retrieval_on_2wiki_records(
    backend: Backend, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Two real 2WikiMultihopQA dev records (a compositional and a comparison question): the eval runs on
    2Wiki's own format and the default pipeline puts every supporting paragraph in its top 5. On this
    9-paragraph corpus the trees put the bridge target (Ermengarde of Tours, 0.950) a hair under Lothair II's
    wife (0.952), so the pair stage pairs the wrong two for the compositional question; the linear model
    (`multihop-trees`) pairs both right. On the issue-24 held-out pools the trees are ahead at R@2."""
    with eval_run(backend, monkeypatch, tmp_path, "2wiki", TWOWIKI) as (_, report, _):
        assert report["questions"] == 2 and report["chunks"] == 9
        recall = report["recall"]
        assert recall["default"]["@5"] == 1.0 and recall["multihop-trees"]["@2"] == 1.0, recall
        assert recall["default"]["@2"] >= max(recall["vector"]["@2"], recall["bm25"]["@2"]), recall


QMSUM = Path(__file__).parent / "fixtures" / "retrieval" / "qmsum"  # 2 QMSum val meetings, cut


def test_eval_on_meeting_transcripts_runs_the_bonus_graph_mode(
    backend: Backend, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Two QMSum meetings as a pool (bench/qmsum_pool.py): every passage's title is its meeting's file name,
    so the `auto` graph mode ranks with `bonus` (issue 24, step 6) and the default row equals hybrid+graph."""
    from bench import qmsum_pool

    pool = tmp_path / "pool"
    qmsum_pool.main(["--source", str(QMSUM), "--out", str(pool)])
    with eval_run(backend, monkeypatch, tmp_path, "musique", pool) as (result, report, _):
        assert report["questions"] == 7 and report["default_graph_mode"] == "bonus"
        recall = report["recall"]
        assert recall["default"] == recall["hybrid+graph"], recall
        assert "default graph mode: bonus" in result.output
