"""Unit tests of the pair stage (app/retrieval/pairs.py): results 1 and 2 chosen together (pure functions)."""

from __future__ import annotations

import math

import pytest

from app.retrieval.pairs import (
    PAIR_FEATURES,
    PAIR_WEIGHTS,
    apply_pair,
    choose_pair,
    coverage,
    logit,
    pair_features,
    pair_heads,
    term_weights,
)
from app.retrieval.scoring import Candidate, rank

QUESTION = "Which city is the publisher of Grace Krilanovich's novel based in?"


def _candidate(cid: str, doc: str, title: str, text: str, final: float) -> Candidate:
    c = Candidate(cid, title=title, doc_id=doc, text=text, final=final)
    c.features = {"vector_n": 0.5}
    return c


def _heads() -> list[Candidate]:
    return [
        _candidate("a", "d1", "Grace Krilanovich", "Her novel was published by Two Dollar Radio.", 0.90),
        _candidate("b", "d2", "The Orange Eats Creeps", "A novel by Grace Krilanovich, published by Two "
                   "Dollar Radio.", 0.85),
        _candidate("c", "d3", "Two Dollar Radio", "An independent publisher based in Columbus, Ohio, a city.",
                   0.40),
        _candidate("d", "d4", "Columbus Crew", "A soccer club.", 0.05),
    ]


def test_coverage_and_term_weights() -> None:
    weights = term_weights(QUESTION, None)
    assert set(weights) == {"city", "publisher", "grace", "krilanovich", "novel", "based"}
    assert coverage(weights, {"grace", "krilanovich", "novel"}) == pytest.approx(0.5)
    assert coverage({}, {"x"}) == 0.0
    # an index gives IDF weights; words no chunk has are dropped
    idf = term_weights(QUESTION, lambda terms: [0.0 if t == "city" else 2.0 for t in terms])
    assert "city" not in idf and set(idf.values()) == {2.0}


def test_logit_inverts_the_sigmoid_and_is_capped() -> None:
    assert logit(1 / (1 + math.exp(-1.5))) == pytest.approx(1.5)
    assert logit(0.0) == -30.0 and logit(1.0) == 30.0


def test_the_complementary_passage_beats_a_near_copy_of_the_first() -> None:
    heads = _heads()
    weights = term_weights(QUESTION, None)
    tokens = [{"grace", "krilanovich", "novel"}, {"grace", "krilanovich", "novel"},
              {"publisher", "based", "city"}, set()]
    choice = choose_pair([logit(c.final) for c in heads], tokens, weights)
    assert choice is not None and (choice.first, choice.second) == (0, 2)
    assert choice.coverage == pytest.approx(1.0) and choice.gain == pytest.approx(0.5)
    # with no coverage weight the two best single passages win, as without the stage
    plain = choose_pair([logit(c.final) for c in heads], tokens, weights, (1.0, 1.0, 0.0, 0.0))
    assert plain is not None and (plain.first, plain.second) == (0, 1)
    assert choose_pair([1.0], [set()], weights) is None
    assert len(PAIR_WEIGHTS) == len(PAIR_FEATURES) == len(pair_features(0, 0, 0, 0, 0))


def test_apply_pair_marks_results_one_and_two_and_rank_puts_them_first() -> None:
    heads = _heads()
    choice = apply_pair(heads, QUESTION, None)
    assert choice is not None
    ordered = rank(heads)
    assert [c.id for c in ordered] == ["a", "c", "b", "d"]
    a, c = ordered[0], ordered[1]
    assert (a.pair_rank, a.pair_with, c.pair_rank, c.pair_with) == (1, "c", 2, "a")
    assert a.features is not None and a.features["pair"] == c.features["pair"] == round(choice.score, 6)  # type: ignore[index]
    assert a.features["coverage"] == pytest.approx(1.0)
    assert ordered[2].pair_rank is None and "pair" not in (ordered[2].features or {})


def test_pair_heads_take_one_chunk_per_document() -> None:
    ranked = [Candidate("x1", doc_id="X", final=0.9), Candidate("x2", doc_id="X", final=0.8),
              Candidate("y1", doc_id="Y", final=0.7), Candidate("z1", title="Z", final=0.6),
              Candidate("w1", final=0.5)]
    assert [c.id for c in pair_heads(ranked, 8)] == ["x1", "y1", "z1", "w1"]
    assert [c.id for c in pair_heads(ranked, 2)] == ["x1", "y1"]
