"""Scoring arithmetic, fusion, caches, validation and text helpers of hybrid retrieval (no store)."""

from __future__ import annotations

import pytest

from app.core.config import Settings
from app.core.errors import BadInput
from app.core.ttl_cache import TTLCache
from app.retrieval import validate
from app.retrieval.answer import extractive_answer, warnings_for
from app.retrieval.qa import _llm_stream, trailer
from app.retrieval.scoring import Candidate, Weights, rank, score
from app.retrieval.text import query_terms, refers_back


def _weights(**kw: object) -> Weights:
    return Weights.from_settings(Settings(**kw))  # type: ignore[arg-type]


def test_contract_weights_are_the_defaults() -> None:
    w = _weights()
    assert (w.bm25, w.degree, w.entity, w.relates, w.cooccur, w.rel_default) == (
        0.4,
        0.1,
        0.12,
        0.15,
        0.10,
        0.15,
    )
    assert (
        w.rel_types["CAUSES"] == 0.22 and w.rel_types["STEP_NEXT"] == 0.12 and w.rel_types["SUPPORTS"] == 0.20
    )
    assert w.rel_weight("CAUSES", 0.5) == pytest.approx(0.11)
    assert w.rel_weight("UNKNOWN_TYPE", 1.0) == pytest.approx(0.15)


def test_base_norm_bonus_composite_arithmetic() -> None:
    w = _weights()
    a = Candidate("a", ["vector"], score_raw=0.9, bm25=1.0, degree=4)
    b = Candidate("b", ["vector"], score_raw=0.7, bm25=0.5, degree=2)
    c = Candidate("c", ["vector"], score_raw=0.8, degree=0)
    c.offer_graph("llm_rel", w.rel_weight("CAUSES", 0.5), 1, w.path_factor(1), "a", "CAUSES", 0.5)
    d = Candidate("d")
    d.offer_graph("relates", w.relates, 2, w.path_factor(2), "c")
    cands = [a, b, c, d]
    score(cands, w)
    assert a.base_norm == pytest.approx(1.0) and b.base_norm == pytest.approx(0.0)
    assert c.base_norm == pytest.approx(0.5) and d.base_norm == 0.0
    assert a.bonus == pytest.approx(0.4 * 1.0 + 0.1 * 1.0)
    assert b.bonus == pytest.approx(0.4 * 0.5 + 0.1 * 0.5)
    assert c.bonus == pytest.approx(0.22 * 0.5)
    assert d.bonus == pytest.approx(0.15 * 0.5)  # one extra hop: decay 0.5
    for x in cands:
        assert x.composite == pytest.approx(x.base_norm + x.bonus)
        assert x.final == pytest.approx(x.composite)
    assert [x.id for x in rank(cands)] == ["a", "c", "b", "d"]
    assert c.rel_type == "CAUSES" and c.rel_conf == 0.5 and c.reason == "vector"
    assert d.reason == "relates" and d.depth == 2


def test_rerank_mixes_half_and_half_and_rrf_option() -> None:
    a = Candidate("a", ["vector"], score_raw=0.9, rerank=0.0)
    b = Candidate("b", ["vector"], score_raw=0.5, rerank=1.0)
    score([a, b], _weights(retrieval_degree_enabled=False))
    assert a.final == pytest.approx(0.5 * a.composite) and b.final == pytest.approx(0.5 * b.composite + 0.5)
    x = Candidate("x", ["vector", "bm25"], score_raw=0.8, vector_rank=1, bm25_rank=2)
    y = Candidate("y", ["vector"], score_raw=0.9, vector_rank=2)
    score([x, y], _weights(retrieval_fusion="rrf", retrieval_rrf_k=60))
    assert x.final == pytest.approx(1 / 61 + 1 / 62) and y.final == pytest.approx(1 / 62)
    assert x.composite == pytest.approx(x.base_norm + x.bonus)


def test_single_candidate_and_graph_keeps_strongest_path() -> None:
    c = Candidate("c")
    assert c.offer_graph("cooccur", 0.10, 2, 0.5)
    assert c.offer_graph("entity", 0.12, 1, 1.0)
    assert not c.offer_graph("relates", 0.15, 2, 0.5)
    assert c.graph_reason == "entity" and c.graph_bonus == pytest.approx(0.12) and c.depth == 1
    assert c.reasons == ["cooccur", "entity", "relates"]
    lone = Candidate("z", ["vector"], score_raw=0.3)
    score([lone], _weights())
    assert lone.base_norm == 1.0


def test_ttl_cache_lru_and_expiry() -> None:
    now = [0.0]
    cache: TTLCache[int] = TTLCache(2, 10.0, clock=lambda: now[0])
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.get("a") == 1
    cache.put("c", 3)  # evicts b (least recently used)
    assert cache.get("b") is None and cache.keys() == ["a", "c"]
    now[0] = 11.0
    assert cache.get("a") is None and len(cache) == 0


def test_validation_names_the_field() -> None:
    s = Settings(query_max_question_chars=20, retrieval_max_top_k=10)
    with pytest.raises(BadInput) as e:
        validate.question(s, "   ")
    assert e.value.field == "question"
    with pytest.raises(BadInput, match="limit is 20"):
        validate.question(s, "x" * 21)
    with pytest.raises(BadInput) as e:
        validate.top_k(s, 11, 8)
    assert e.value.field == "top_k"
    assert validate.top_k(s, None, 8) == 8
    with pytest.raises(BadInput) as e:
        validate.context(s, ["ok", {"id": "x"}])
    assert e.value.field == "context[1].text"
    with pytest.raises(BadInput) as e:
        validate.history(s, [{"role": "robot", "content": "hi"}])
    assert e.value.field == "history[0].role"
    items = validate.context(s, ["plain", {"id": "m1", "text": "memo", "score": 0.5}])
    assert [(i.id, i.text, i.score) for i in items] == [("ext1", "plain", None), ("m1", "memo", 0.5)]


def test_text_helpers() -> None:
    assert query_terms("Who directed the film shot in Leland, North Carolina?") == [
        "directed",
        "film",
        "shot",
        "leland",
        "north",
        "carolina",
    ]
    assert refers_back("What about its author?") and not refers_back("Who wrote Dune?")


def test_extractive_answer_cites_and_warnings() -> None:
    sources = [
        {"rank": 1, "id": "c1", "text": "Stephen King directed Maximum Overdrive. It was shot in 1986."},
        {"rank": 2, "id": "c2", "text": "Leland is a town in North Carolina."},
    ]
    text = extractive_answer("Who directed Maximum Overdrive?", sources)
    assert "[S1]" in text and "Stephen King" in text
    warns = warnings_for("It opened in 1986. Stephen King directed it [S1].", sources)
    types = [w["type"] for w in warns]
    assert "unused_sources" in types and "unreferenced_numeric" in types
    assert any("S2" in w["detail"] for w in warns if w["type"] == "unused_sources")


def test_extractive_answer_drops_off_topic_sentences() -> None:
    sources = [{"rank": 1, "id": "c1", "text": (
        "Coffee brewing starts with fresh beans. Espresso was popularised in Milan. "
        "Melitta Bentz invented the paper coffee filter in Dresden in 1908.")}]
    text = extractive_answer("Who invented the paper coffee filter?", sources)
    assert text == "Melitta Bentz invented the paper coffee filter in Dresden in 1908. [S1]"


def test_trailer_and_mid_stream_error_parse_like_the_client() -> None:
    from app.core.errors import LLMUnavailable

    def deltas():  # type: ignore[no-untyped-def]
        yield "Stephen King [S1]"
        raise LLMUnavailable("the LLM endpoint failed while streaming", "ReadTimeout")

    sources = [
        {"rank": 1, "id": "c1", "reason": "vector", "score": 0.8421},
        {"rank": 2, "id": "ext1", "reason": "external", "score": 1.0},
    ]
    text = "".join(_llm_stream("Answer: ", deltas(), sources))
    body, _, tail = text.rpartition("[SOURCES]")
    assert "\n[ERROR] the LLM endpoint failed while streaming" in body
    assert body.startswith("Answer: Stephen King [S1]")
    lines = [ln for ln in tail.strip().splitlines() if ln.startswith("- ")]
    assert len(lines) == 2
    assert "rank=1" in lines[0] and "reason=vector" in lines[0] and "score=0.8421" in lines[0]
    assert trailer(sources).startswith("\n\n[SOURCES]\n- 1. c1 (rank=1, reason=vector, score=0.8421)\n")
