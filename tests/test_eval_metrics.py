"""Hits@1, F1 and recall arithmetic on known inputs."""

from __future__ import annotations

import math

from app.evaluation.metrics import f1, hits_at_1, match, micro_recall, normalize, recall, split_answer


def test_normalize_and_match() -> None:
    assert normalize("The United_Kingdom!") == "united kingdom"
    assert match("It is the united kingdom.", "United_Kingdom")
    assert not match("kingdoms", "kingdom") and not match("anything", "")


def test_hits_at_1() -> None:
    assert hits_at_1(["united_kingdom", "france"], ["United Kingdom"]) == 1.0
    assert hits_at_1(["france", "united_kingdom"], ["United Kingdom"]) == 0.0
    assert hits_at_1([], ["x"]) == 0.0


def test_f1_known_values() -> None:
    # 3 predictions, 2 right; 4 gold answers, 2 found -> P = 2/3, R = 1/2, F1 = 4/7
    p, r, f = f1(["paris", "lyon", "rome"], ["Paris", "Lyon", "Nice", "Lille"])
    assert math.isclose(p, 2 / 3) and math.isclose(r, 0.5) and math.isclose(f, 4 / 7)
    assert f1(["x"], ["y"]) == (0.0, 0.0, 0.0)
    assert f1([], ["y"]) == (0.0, 0.0, 0.0)
    assert split_answer("Paris, Lyon and Rome\nNice;") == ["Paris", "Lyon", "Rome", "Nice"]


def test_recall_micro_vs_macro() -> None:
    assert recall(1, 2) == 0.5 and recall(0, 0) == 0.0
    # micro: (1 + 3) / (2 + 3) = 0.8 while the mean of per-sample recalls is 0.75
    assert math.isclose(micro_recall([(1, 2), (3, 3)]), 0.8)
