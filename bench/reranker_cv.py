"""Choosing how to fit the feature reranker on training questions only (used by bench/train_reranker.py).

Two-fold cross-validation *inside* the training sets: each set's questions split by parity, every
variant fitted on one half of every set and scored on the other half, both ways. A variant's score is
the macro mean (each training set counts the same, whatever its size) of recall@2, @5 and @10; the best
variant is then fitted on all training questions. No held-out or dev question takes part in the choice.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Variant:
    """How the reranker and the pair stage are fitted."""

    balance: bool  # each training set weighs the same (else each candidate does)
    fit_pairs: bool  # refit the pair weights (else keep those in the code)
    trees: bool = False  # boosted trees (bench/reranker_trees.py) instead of a logistic regression

    @property
    def name(self) -> str:
        model = "trees" if self.trees else "linear"
        pairs = "fitted" if self.fit_pairs else "code"
        return f"{model}, {'balanced' if self.balance else 'pooled'}, {pairs} pairs"


VARIANTS = tuple(Variant(b, p, t) for t in (False, True) for b in (False, True) for p in (True, False))


def folds(n: int) -> tuple[list[int], list[int]]:
    """Question indexes of the two folds: even and odd positions."""
    return list(range(0, n, 2)), list(range(1, n, 2))


def set_weights(sizes: Sequence[int], balance: bool) -> np.ndarray:
    """One weight per row of sets of ``sizes`` rows: 1 each, or (balance) every set summing to the same
    total (the mean weight stays 1)."""
    if not balance:
        return np.ones(sum(sizes))
    total, n = sum(sizes), len(sizes)
    return np.concatenate([np.full(size, total / (n * size)) for size in sizes if size])


def macro(recalls: Sequence[Sequence[float]]) -> list[float]:
    """Mean recall@2/5/10 over sets (each set one row)."""
    return [round(float(v), 4) for v in np.mean(np.asarray(recalls, dtype=float), axis=0)]


def cross_validate(n_questions: Sequence[int], fit: Callable[[list[list[int]]], object],
                   score: Callable[[object, list[list[int]]], list[list[float]]]) -> list[list[float]]:
    """Recall@2/5/10 of each set over both folds (fold means): ``fit(indexes per set)`` returns a model,
    ``score(model, indexes per set)`` its recall@2/5/10 per set. ``macro`` of it scores the variant."""
    split = [folds(n) for n in n_questions]
    per_fold = []
    for a, b in ((0, 1), (1, 0)):
        model = fit([s[a] for s in split])
        per_fold.append(score(model, [s[b] for s in split]))
    return [macro(rows) for rows in zip(*per_fold, strict=True)]


def best(scores: dict[Variant, list[float]]) -> Variant:
    """The variant of highest mean recall (R@2, R@5, R@10 averaged) among those scored; ties: the first
    in VARIANTS order."""
    return max(scores, key=lambda v: (round(sum(scores[v]) / 3, 4), -VARIANTS.index(v)))
