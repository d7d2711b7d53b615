"""Pair stage of multi-hop ranking: the first two results are chosen together, not one at a time.

A multi-hop question needs two passages that answer it *together* (HotpotQA: the bridge passage and the
passage it leads to; or the two compared entities). Ranked one by one, the second best passage is often
a near-copy of the first. Among the ``top`` best candidates (distinct documents) every pair is scored

    pair = w1 * s_first + w2 * s_second + w3 * coverage + w4 * gain

where ``s`` is each candidate's reranker logit, ``coverage`` the IDF-weighted share of the question's
content words found in the two passages together (title + text) and ``gain`` what the pair covers beyond
its better single passage. The best pair becomes results 1 and 2 (in their own order); the rest keeps the
reranker's order. Weights: a logistic regression on train questions only (issue 24: the fit halves of the
2WikiMultihopQA, HotpotQA and MuSiQue train pools, under the train-fitted reranker ``WEIGHTS``;
``bench/train_reranker.py``, measured in docs/BENCHMARKS.md, "Issue 24, step 3"); they replace issue 17's
weights, which were fitted on HotpotQA dev questions. ``PAIR_WEIGHTS_UNTITLED`` (corpora without usable
titles) were fitted on the same train pools with ids for titles, under ``WEIGHTS_UNTITLED``.
Pure functions, no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from app.retrieval.scoring import Candidate
from app.retrieval.text import query_terms, tokenize

PAIR_FEATURES = ("first", "second", "coverage", "gain")
# fitted by bench/train_reranker.py on train questions ("pooled, fitted pairs", with rerank_features.WEIGHTS;
# order of PAIR_FEATURES); only the ranking of pairs matters, no bias
PAIR_WEIGHTS = (0.35, 0.68, 0.93, 2.57)
# on a corpus without usable titles (fitted with rerank_features.WEIGHTS_UNTITLED)
PAIR_WEIGHTS_UNTITLED = (0.68, 0.86, 0.28, 5.85)
LOGIT_CAP = 30.0


@dataclass(frozen=True)
class PairChoice:
    """The chosen pair (indexes into the heads list, first ranked above second) and its features."""

    first: int
    second: int
    score: float
    coverage: float
    gain: float


def logit(p: float) -> float:
    """log(p / (1 - p)), capped at +-LOGIT_CAP."""
    p = min(max(p, 1e-15), 1 - 1e-15)
    return max(-LOGIT_CAP, min(LOGIT_CAP, math.log(p / (1 - p))))


def term_weights(question: str, idf: Callable[[list[str]], list[float]] | None) -> dict[str, float]:
    """The question's content words with their IDF (1.0 each without an index; unknown words dropped)."""
    terms = query_terms(question)
    if idf is None:
        return dict.fromkeys(terms, 1.0)
    return {t: w for t, w in zip(terms, idf(terms), strict=True) if w > 0}


def coverage(weights: dict[str, float], tokens: set[str]) -> float:
    """Share of the question's term weight found in ``tokens`` (0 when the question has no terms)."""
    total = sum(weights.values())
    return sum(w for t, w in weights.items() if t in tokens) / total if total > 0 else 0.0


def pair_features(s_first: float, s_second: float, cov_first: float, cov_second: float,
                  cov_union: float) -> tuple[float, float, float, float]:
    """The PAIR_FEATURES of one pair."""
    return (s_first, s_second, cov_union, cov_union - max(cov_first, cov_second))


def pair_rows(logits: Sequence[float], token_sets: Sequence[set[str]],
              weights: dict[str, float]) -> Iterator[tuple[int, int, tuple[float, float, float, float]]]:
    """``(i, j, PAIR_FEATURES)`` of every pair of the heads (given best first), i before j."""
    single = [coverage(weights, tokens) for tokens in token_sets]
    for i in range(len(logits)):
        for j in range(i + 1, len(logits)):
            union = coverage(weights, token_sets[i] | token_sets[j])
            yield i, j, pair_features(logits[i], logits[j], single[i], single[j], union)


def choose_pair(logits: Sequence[float], token_sets: Sequence[set[str]], weights: dict[str, float],
                pair_weights: Sequence[float] = PAIR_WEIGHTS) -> PairChoice | None:
    """The best pair of the heads (given best first); None with fewer than two heads."""
    best: PairChoice | None = None
    for i, j, f in pair_rows(logits, token_sets, weights):
        value = sum(w * x for w, x in zip(pair_weights, f, strict=True))
        if best is None or value > best.score:
            best = PairChoice(i, j, value, f[2], f[3])
    return best


def pair_heads(ranked: list[Candidate], top: int) -> list[Candidate]:
    """The ``top`` best candidates of distinct documents (a document's best chunk stands for it)."""
    heads: list[Candidate] = []
    seen: set[str] = set()
    for c in ranked:
        key = c.doc_id or c.title or c.id
        if key not in seen:
            seen.add(key)
            heads.append(c)
            if len(heads) == top:
                break
    return heads


def passage_tokens(c: Candidate) -> set[str]:
    """Folded word tokens of a candidate's title and text."""
    return set(tokenize(f"{c.title or ''} {c.text}"))


def apply_pair(heads: list[Candidate], question: str,
               idf: Callable[[list[str]], list[float]] | None, untitled: bool = False) -> PairChoice | None:
    """Mark the best pair of ``heads`` (texts loaded) as results 1 and 2: ``pair_rank``, ``pair_with``
    and the ``pair`` / ``coverage`` features (``untitled``: PAIR_WEIGHTS_UNTITLED); returns the choice."""
    weights = term_weights(question, idf)
    choice = choose_pair([logit(c.final) for c in heads], [passage_tokens(c) for c in heads], weights,
                         PAIR_WEIGHTS_UNTITLED if untitled else PAIR_WEIGHTS)
    if choice is None:
        return None
    a, b = heads[choice.first], heads[choice.second]
    for rank_, c, other in ((1, a, b), (2, b, a)):
        c.pair_rank, c.pair_with = rank_, other.id
        if c.features is not None:
            c.features["pair"] = round(choice.score, 6)
            c.features["coverage"] = round(choice.coverage, 6)
    return choice
