"""bench/train_reranker.py and bench/reranker_cv.py: the CV that chooses how to fit, pool halves, document
labels, and one end-to-end fit on a 6-question HotpotQA slice (real embedder, no store)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.evaluation.retrieval_eval import EvalQuestion  # noqa: E402
from app.retrieval.rerank_trees import TreeModel  # noqa: E402
from bench import reranker_cv as cv  # noqa: E402
from bench import train_reranker as tr  # noqa: E402
from ingest.load import record_doc_id  # noqa: E402

HOTPOT = ROOT / "tests" / "fixtures" / "retrieval" / "hotpot_eval"


def test_folds_weights_and_macro() -> None:
    assert cv.folds(5) == ([0, 2, 4], [1, 3])
    assert cv.set_weights([2, 3], balance=False).tolist() == [1.0] * 5
    w = cv.set_weights([1, 4], balance=True)  # each set sums to the same, mean weight 1
    assert w[:1].sum() == pytest.approx(w[1:].sum()) and w.mean() == pytest.approx(1.0)
    assert cv.macro([[0.2, 0.4, 0.6], [0.4, 0.6, 0.8]]) == [0.3, 0.5, 0.7]


def test_cross_validation_fits_on_one_fold_and_scores_the_other() -> None:
    seen: list[tuple[list[list[int]], list[list[int]]]] = []

    def fit(idx: list[list[int]]) -> object:
        return idx

    def score(model: object, idx: list[list[int]]) -> list[list[float]]:
        seen.append((model, idx))  # type: ignore[arg-type]
        return [[float(len(i)), 0.0, 1.0] for i in idx]

    per_set = cv.cross_validate([4, 3], fit, score)
    assert seen[0] == ([[0, 2], [0, 2]], [[1, 3], [1]]) and seen[1] == ([[1, 3], [1]], [[0, 2], [0, 2]])
    assert per_set == [[2.0, 0.0, 1.0], [1.5, 0.0, 1.0]]
    scores = {v: [0.5, 0.5, 0.5] for v in cv.VARIANTS}
    assert cv.best(scores) == cv.VARIANTS[0]  # ties: the first
    scores[cv.VARIANTS[3]] = [0.5, 0.5, 0.51]
    assert cv.best(scores) == cv.VARIANTS[3]


def test_pool_halves_and_supporting_documents(tmp_path: Path) -> None:
    (tmp_path / "pool.json").write_text(json.dumps({"fit": 3}), encoding="utf-8")
    assert tr.question_slice(tmp_path, ["fit"], 7) == (0, 3)
    assert tr.question_slice(tmp_path, ["heldout"], 7) == (3, 7)
    assert tr.question_slice(tmp_path, ["1", "4"], 7) == (1, 4)
    assert tr.question_slice(tmp_path, [], 7) == (0, 7)
    # MuSiQue-style: two paragraphs share a title, the question names one by its text
    one, two = record_doc_id("T", "first"), record_doc_id("T", "second")
    by_title = {"T": {one, two}, "U": {"u"}}
    q = EvalQuestion("q", "?", ["T", "U"], ["second"])
    assert tr.support_docs(q, {one, two, "u"}, by_title) == {two, "u"}
    assert tr.support_docs(EvalQuestion("q", "?", ["T"]), {one, two}, by_title) == {one, two}


@pytest.mark.parametrize("model", ["linear", "trees"])
def test_end_to_end_fit_and_report(tmp_path: Path, model: str) -> None:
    out = tmp_path / "fit.json"
    spec = f"hotpotqa:{HOTPOT}"
    report = tr.main(["--train", f"{spec}:0:6", "--test", f"{spec}:0:6", "--cache", str(tmp_path / "cache"),
                      "--json-out", str(out), "--model", model])
    assert json.loads(out.read_text(encoding="utf-8")) == json.loads(json.dumps(report))
    assert report["variant"] in {v.name for v in cv.VARIANTS} and report["variant"].startswith(model)
    assert {n.split(",")[0] for n in report["cross_validation"]} == {model, "trees in the code",  # type: ignore[attr-defined]
                                                                     "linear weights in the code",
                                                                     "single retrievers"}
    assert len(report["pair_weights"]) == 4  # type: ignore[arg-type]
    if model == "trees":  # written beside --json-out (--write-model: into app/retrieval/models/)
        written = tmp_path / "reranker_trees.json"
        trees = TreeModel.from_dict(json.loads(written.read_text(encoding="utf-8")))
        assert report["trees"] == str(written) and trees.features == tr.FEATURES
    else:
        assert len(report["weights"]) == len(tr.FEATURES)  # type: ignore[arg-type]
        assert np.isfinite(report["bias"])  # type: ignore[arg-type]
    (test,) = report["tests"]  # type: ignore[misc]
    assert test["questions"] == 6 and test["untitled"] is False and test["title_links"] > 0.05
    for key in ("vector", "bm25", "code", "code_linear", "fitted", "fitted_no_pair"):
        r2, r5, r10 = test[key]
        assert 0.0 <= r2 <= r5 <= r10 <= 1.0
    assert test["code"][1] >= max(test["vector"][1], test["bm25"][1])  # the default beats both at R@5 here
    assert list((tmp_path / "cache").glob("*.npy"))  # vectors cached
