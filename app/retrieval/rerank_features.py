"""Feature reranker: a model over the signals retrieval already has (no model download, no GPU).

Features of a candidate (all in [0, 1]):

=========  =================================================================================
vector_n   min-max of the vector score over the candidate set (``base_norm``)
vector     the vector score itself, (1 + cos) / 2
bm25       BM25, max-normalised per question
title      the chunk's title is named in the question
bridge     the chunk's title is named by one of the best first-stage chunks (relative strength)
ppr        Personalized PageRank from the question's entities, divided by the best chunk's
overlap    rarity-weighted share of the question's entities the chunk mentions
vector_rk  1 / sqrt(rank) in the vector top ``RANK_CAP`` (0 beyond)
bm25_rk    1 / sqrt(rank) in the BM25 top ``RANK_CAP`` (0 beyond)
bridge_v   bridge x vector_n (a bridged chunk that also answers the question's wording)
title_v    title x vector_n
bridge_b   bridge x bm25
ppr_v      ppr x vector_n
=========  =================================================================================

Two models, both fitted on **train** questions only (the fit halves of the issue-24 train pools:
2WikiMultihopQA train 501, HotpotQA train 41, MuSiQue train 82; supporting paragraphs as positives, every
other candidate as a negative), chosen by cross-validation inside those halves and fitted by
``bench/train_reranker.py``, checked on the pools' held-out halves (docs/BENCHMARKS.md, issue 24). No dev or
test question of any dataset took part.

- ``trees`` (``NEORAG_RETRIEVAL_RERANKER=trees``, the default): boosted regression trees
  (``app.retrieval.rerank_trees``, ``app/retrieval/models/*.json``); they learn what a sum of weights
  cannot, e.g. that a bridge counts only when the bridged chunk also matches the question's words.
- ``linear``: ``final = sigmoid(w . x + b)``, a class-balanced logistic regression (``WEIGHTS``).

Either way ``contributions`` splits the log-odds into a share per feature and a ``bias``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from app.retrieval.rerank_trees import TreeModel, sigmoid, tree_model
from app.retrieval.scoring import Candidate

FEATURES = (
    "vector_n", "vector", "bm25", "title", "bridge", "ppr", "overlap", "vector_rk", "bm25_rk",
    "bridge_v", "title_v", "bridge_b", "ppr_v",
)
RANK_CAP = 24
# fitted by bench/train_reranker.py (see the module docstring and docs/BENCHMARKS.md); order of FEATURES
WEIGHTS = (5.287, -0.726, 1.676, 1.526, 10.077, 2.851, 1.12, 0.982, 2.999, -3.967, -0.045, -6.721, -2.119)
BIAS = -6.596
# the same model for a corpus without usable titles (app.retrieval.multihop.titles_usable false: title,
# bridge and their products are 0 there), fitted on the same fit halves with titles replaced by ids
# (variant "balanced, fitted pairs": each training set weighs the same)
WEIGHTS_UNTITLED = (2.765, 1.992, 0.872, 0.0, 0.0, 2.425, 1.289, 1.91, 2.116, 0.0, 0.0, 0.0, -2.208)
BIAS_UNTITLED = -4.61


def rank_feature(rank: int | None) -> float:
    """1 / sqrt(rank) within the first RANK_CAP, else 0."""
    return 1.0 / math.sqrt(rank) if rank and rank <= RANK_CAP else 0.0


def feature_vector(c: Candidate) -> list[float]:
    """The candidate's features in ``FEATURES`` order."""
    return [
        c.base_norm,
        c.score_raw or 0.0,
        c.bm25,
        c.title_match,
        c.bridge,
        c.ppr,
        c.overlap,
        rank_feature(c.vector_rank),
        rank_feature(c.bm25_rank),
        c.bridge * c.base_norm,
        c.title_match * c.base_norm,
        c.bridge * c.bm25,
        c.ppr * c.base_norm,
    ]


def model_score(x: list[float], weights: tuple[float, ...] = WEIGHTS, bias: float = BIAS) -> float:
    """sigmoid(w . x + b)."""
    z = bias + sum(w * v for w, v in zip(weights, x, strict=True))
    return 1.0 / (1.0 + math.exp(-z)) if z > -50 else 0.0


def model_weights(untitled: bool = False) -> tuple[tuple[float, ...], float]:
    """(weights, bias) of the model: the untitled ones for a corpus without usable titles."""
    return (WEIGHTS_UNTITLED, BIAS_UNTITLED) if untitled else (WEIGHTS, BIAS)


@dataclass(frozen=True)
class LinearModel:
    """The linear reranker over candidates x features rows (the interface of ``rerank_trees.TreeModel``)."""

    weights: tuple[float, ...]
    bias: float

    def probabilities(self, x: np.ndarray) -> np.ndarray:
        """sigmoid(w . x + b) of every row."""
        return sigmoid(x @ np.asarray(self.weights) + self.bias)

    def contributions(self, x: np.ndarray) -> tuple[float, np.ndarray]:
        """(bias, candidates x features): w_i x_i per feature; with the bias they sum to the logit."""
        return self.bias, x * np.asarray(self.weights)


def reranker_model(untitled: bool = False, trees: bool = True,
                   embedding: str | None = None) -> TreeModel | LinearModel:
    """The shipped reranker: the boosted trees (those fitted on ``embedding``'s features where they ship)
    or the linear weights, fitted with titles or without."""
    return tree_model(untitled, embedding) if trees else LinearModel(*model_weights(untitled))


def rerank_by_features(candidates: list[Candidate], untitled: bool = False, trees: bool = True,
                       embedding: str | None = None) -> None:
    """Set ``features`` and ``final`` on every candidate, in place: the model's score (``trees``: the
    boosted trees, those of ``embedding`` where they ship, else the linear weights; ``untitled``: the
    model fitted without titles), averaged with an external reranker's score where one ran (``rerank``)."""
    if not candidates:
        return
    x = np.array([feature_vector(c) for c in candidates], dtype=np.float64)
    final = reranker_model(untitled, trees, embedding).probabilities(x).tolist()
    for c, row, p in zip(candidates, np.round(x, 6).tolist(), final, strict=True):
        c.features = dict(zip(FEATURES, row, strict=True))
        c.final = p if c.rerank is None else 0.5 * p + 0.5 * c.rerank


def explain(candidates: list[Candidate], untitled: bool = False, trees: bool = True,
            embedding: str | None = None) -> None:
    """Set ``contributions`` on the given (already scored) candidates: the model's log-odds split into
    ``bias`` and a share per feature (``app.retrieval.rerank_trees``; linear: w_i x_i). Only the items a
    response shows need it, so it runs on those alone."""
    if not candidates:
        return
    x = np.array([feature_vector(c) for c in candidates], dtype=np.float64)
    bias, parts = reranker_model(untitled, trees, embedding).contributions(x)
    for c, share in zip(candidates, parts.tolist(), strict=True):
        c.contributions = {"bias": round(bias, 6), **{f: round(v, 6) for f, v in zip(FEATURES, share,
                                                                                      strict=True)}}
