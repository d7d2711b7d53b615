"""The tree reranker: evaluation, contributions, the JSON form, and the shipped models."""

from __future__ import annotations

import json

import numpy as np
import pytest

from app.retrieval.rerank_features import FEATURES, explain, rerank_by_features
from app.retrieval.rerank_trees import TreeModel, model_path, sigmoid, tree_model
from app.retrieval.scoring import Candidate
from bench.reranker_trees import export, fit_trees

# one tree of depth 2 over two features, plus a stump: hand-checked below
HAND = {"features": ["a", "b"], "baseline": -1.0, "depth": 2, "trees": [
    {"feature": [0, 1, 0, 0, 0], "threshold": [0.5, 0.2, 0.0, 0.0, 0.0], "left": [1, 3, -1, -1, -1],
     "right": [2, 4, -1, -1, -1], "value": [0.1, -0.2, 0.4, -0.5, 0.1]},
    {"feature": [1, 0, 0], "threshold": [0.7, 0.0, 0.0], "left": [1, -1, -1], "right": [2, -1, -1],
     "value": [0.0, -0.3, 0.3]},
]}


def test_hand_built_trees_score_and_split_their_score_by_feature() -> None:
    m = TreeModel.from_dict(HAND)
    x = np.array([[0.4, 0.1], [0.4, 0.9], [0.9, 0.0], [0.5, 0.7]])  # x <= threshold goes left
    expected = -1.0 + np.array([-0.5 - 0.3, 0.1 + 0.3, 0.4 - 0.3, 0.1 - 0.3])
    assert m.raw(x) == pytest.approx(expected)
    assert m.probabilities(x) == pytest.approx(1 / (1 + np.exp(-expected)))
    bias, parts = m.contributions(x)
    assert bias == pytest.approx(-1.0 + 0.1 + 0.0)  # the baseline and each root's expected value
    # row 0: a moves 0.1 -> -0.2 (-0.3), b moves -0.2 -> -0.5 (-0.3) and 0.0 -> -0.3 in the stump (-0.3)
    assert parts[0] == pytest.approx([-0.3, -0.6])
    assert (bias + parts.sum(axis=1)) == pytest.approx(m.raw(x))
    assert m.raw(np.zeros((0, 2))).shape == (0,)


def test_json_form_round_trips() -> None:
    m = TreeModel.from_dict(HAND)
    again = TreeModel.from_dict(json.loads(json.dumps(m.to_dict())))
    x = np.random.default_rng(1).random((50, 2))
    assert again.raw(x) == pytest.approx(m.raw(x)) and again.features == ("a", "b")
    assert again.to_dict() == m.to_dict()


def test_exported_scikit_learn_trees_give_scikit_learns_probabilities() -> None:
    from sklearn.ensemble import HistGradientBoostingClassifier

    rng = np.random.default_rng(0)
    x = rng.random((3000, 4))
    y = ((x[:, 0] * x[:, 1] + 0.3 * x[:, 2] + 0.1 * rng.standard_normal(3000)) > 0.45).astype(float)
    model = HistGradientBoostingClassifier(max_depth=3, max_iter=30, random_state=0).fit(x, y)
    ours = export(model, ("a", "b", "c", "d"))
    test = rng.random((400, 4))
    assert ours.probabilities(test) == pytest.approx(model.predict_proba(test)[:, 1], abs=1e-7)
    bias, parts = ours.contributions(test)
    assert bias + parts.sum(axis=1) == pytest.approx(ours.raw(test), abs=1e-9)
    assert abs(parts[:, 3]).max() < abs(parts[:, 0]).max()  # d is noise, a carries the label
    fitted = fit_trees(x, y, np.ones(len(y)), ("a", "b", "c", "d"), max_trees=20)
    assert 1 <= fitted.trees <= 20 and fitted.depth <= 3


@pytest.mark.parametrize("untitled", [False, True])
def test_shipped_models_use_the_reranker_features(untitled: bool) -> None:
    m = tree_model(untitled)
    assert model_path(untitled).is_file() and m.features == FEATURES
    assert m.feature.max() < len(FEATURES) and 0 < m.depth <= 4 and m.trees >= 10
    used = {FEATURES[f] for t in m.to_dict()["trees"] for f, a in zip(t["feature"], t["left"], strict=True)
            if a >= 0}
    title_only = {"title", "bridge", "bridge_v", "title_v", "bridge_b"}  # always 0 without usable titles
    assert not used & title_only if untitled else {"bridge", "vector_n"} <= used


def test_a_bridged_chunk_that_matches_the_question_outscores_an_unbridged_one() -> None:
    def cand(bridge: float) -> Candidate:
        c = Candidate("x", score_raw=0.7, bm25=0.4, vector_rank=3, bm25_rank=5)
        c.base_norm, c.bridge, c.ppr, c.overlap = 0.8, bridge, 0.2, 0.3
        return c

    plain, bridged = cand(0.0), cand(1.0)
    rerank_by_features([plain, bridged])
    explain([plain, bridged])
    assert bridged.final > plain.final
    assert plain.contributions is not None and bridged.contributions is not None
    assert bridged.contributions["bridge"] > plain.contributions["bridge"]
    for c in (plain, bridged):
        logit = float(np.log(c.final / (1 - c.final)))
        assert sum(c.contributions.values()) == pytest.approx(logit, abs=1e-5)
    rerank_by_features([])  # nothing to score
    explain([])


def test_sigmoid_does_not_overflow() -> None:
    assert sigmoid(np.array([-1e4, 0.0, 1e4])) == pytest.approx([0.0, 0.5, 1.0])
