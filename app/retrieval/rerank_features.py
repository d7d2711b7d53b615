"""Feature reranker: a linear model over the signals retrieval already has (no model download, no GPU).

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
=========  =================================================================================

``final = sigmoid(w . x + b)``. The weights are a logistic regression fitted on development questions
only (HotpotQA train100 + the first half of a 500-question HotpotQA dev sample, supporting paragraphs as
positives, every other candidate as a negative; ``bench/train_reranker.py`` refits them) and checked on
questions it never saw (docs/BENCHMARKS.md, "Retrieval quality (issue 17)").
"""

from __future__ import annotations

import math

from app.retrieval.scoring import Candidate

FEATURES = ("vector_n", "vector", "bm25", "title", "bridge", "ppr", "overlap", "vector_rk", "bm25_rk")
RANK_CAP = 24
# fitted by bench/train_reranker.py (see the module docstring); order of FEATURES
WEIGHTS = (0.0, 2.0, 1.0, 1.5, 4.5, 3.0, -0.5, 1.0, 1.0)
BIAS = -4.0


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
    ]


def model_score(x: list[float], weights: tuple[float, ...] = WEIGHTS, bias: float = BIAS) -> float:
    """sigmoid(w . x + b)."""
    z = bias + sum(w * v for w, v in zip(weights, x, strict=True))
    return 1.0 / (1.0 + math.exp(-z)) if z > -50 else 0.0


def rerank_by_features(candidates: list[Candidate]) -> None:
    """Set ``features`` and ``final`` on every candidate, in place: the model's score, averaged with an
    external reranker's score where one ran (``rerank``)."""
    for c in candidates:
        x = feature_vector(c)
        c.features = dict(zip(FEATURES, (round(v, 6) for v in x), strict=True))
        c.final = model_score(x)
        if c.rerank is not None:
            c.final = 0.5 * c.final + 0.5 * c.rerank
