"""CoRAG agent logic over an in-memory BM25 retriever of HotpotQA paragraphs, LLM = scripted OpenAI server."""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path
from typing import Any

from app.reasoning.corag import CoRAGAgent, CoRAGConfig, clean_answer, clean_subquery, no_info_loglik
from app.reasoning.text import bm25_rank
from app.services.llm import LLMClient
from tests.support.fake_openai import ScriptedOpenAI
from tests.support.reasoning import CORAG_QUESTION, prompt
from tests.support.reasoning import corag_call as kind

EVAL = Path(__file__).parent / "fixtures" / "reasoning" / "hotpotqa_eval.json"
QUESTION = CORAG_QUESTION


def paragraphs() -> list[dict[str, Any]]:
    items = json.loads(EVAL.read_text())
    return [
        {"id": f"p{i}", "title": title, "contents": "".join(sents)}
        for i, (title, sents) in enumerate(c for item in items for c in item["context"])
    ]


class MemoryRetriever:
    def __init__(self) -> None:
        self.docs = paragraphs()
        self.queries: list[str] = []

    def __call__(self, query: str, k: int) -> list[dict[str, Any]]:
        self.queries.append(query)
        ranked = bm25_rank(query, [d["title"] + " " + d["contents"] for d in self.docs])
        return [self.docs[i] for i, _ in ranked[:k]]


def client(llm: ScriptedOpenAI) -> LLMClient:
    return LLMClient(llm.base_url, "k", "scripted", timeout_s=5, max_retries=0)


def test_helpers() -> None:
    assert clean_subquery("SubQuery: Who is Gallu?\nmore") == "Who is Gallu?"
    assert clean_subquery('  "Intermediate query 2: What is Lilu?"') == "What is Lilu?"
    assert clean_subquery("\n\n") == ""
    assert clean_answer("Final Answer:  a   spirit") == "a spirit"
    assert no_info_loglik("No relevant information found", [-0.5, -1.5]) == -1.0
    assert math.isclose(no_info_loglik("a spirit", [math.log(0.75)]), math.log(0.25))
    assert no_info_loglik("No relevant information found", None) == 0.0
    assert no_info_loglik("a spirit", None) < -10


def test_greedy_chain_retrieves_per_subquery_and_answers() -> None:
    subqueries = iter(["SubQuery: What is Gallu?", "What is Lilu in mythology?", "Lilu spirit"])

    def reply(body: dict[str, Any]) -> str:
        k = kind(body)
        if k == "subquery":
            assert body["temperature"] == 0.0
            return next(subqueries)
        if k == "subanswer":
            return "Lilu is a spirit" if "Lilu" in prompt(body) else "No relevant information found"
        return "Final Answer: a spirit"

    retriever = MemoryRetriever()
    with ScriptedOpenAI([], default=reply) as llm:
        res = CoRAGAgent(client(llm), retriever, CoRAGConfig(top_k=3)).run(QUESTION)
    assert res.answer == "a spirit"
    steps = res.path.steps()
    assert [s["subquery"] for s in steps] == ["What is Gallu?", "What is Lilu in mythology?", "Lilu spirit"]
    assert all(len(s["doc_ids"]) == 3 for s in steps)
    assert retriever.queries == ["What is Gallu?", "What is Lilu in mythology?", "Lilu spirit", QUESTION]
    # Lilu (mythology) is the gold paragraph; BM25 finds it for the second sub-query
    lilu = next(d["id"] for d in retriever.docs if d["title"] == "Lilu (mythology)")
    assert lilu in steps[1]["doc_ids"]
    assert res.llm_calls == 7 and res.usage["calls"] == 7 and res.usage["prompt_tokens"] > 0


def test_repeated_subquery_is_resampled_then_chain_stops() -> None:
    replies = iter(
        ["What is Gallu?", "What is Gallu?", "what is gallu?", "What is Lilu?"] + ["What is Lilu?"] * 10
    )
    temps: list[float] = []

    def reply(body: dict[str, Any]) -> str:
        if kind(body) == "subquery":
            temps.append(body["temperature"])
            return next(replies)
        return "a spirit"

    with ScriptedOpenAI([], default=reply) as llm:
        res = CoRAGAgent(client(llm), MemoryRetriever(), CoRAGConfig(max_resample=3)).run(QUESTION)
    assert [s["subquery"] for s in res.path.steps()] == ["What is Gallu?", "What is Lilu?"]
    assert temps[:4] == [0.0, 0.0, 0.7, 0.7]  # repeats re-sampled at the sampling temperature
    assert len(temps) == 4 + 4  # third step: 1 + 3 re-samples all repeat -> the chain stops


def test_best_of_n_keeps_the_path_least_likely_to_hold_no_information() -> None:
    counter = itertools.count()

    def reply(body: dict[str, Any]) -> Any:
        k = kind(body)
        if k == "subquery":
            if body["temperature"] == 0.0:
                return "What is Gallu?" if "Nothing yet" in prompt(body) else "What is Lilu?"
            return f"sampled question {next(counter)}"
        if k == "score":
            assert body.get("logprobs") is True
            if "sampled question 5" in prompt(body):  # the third path (4, 5, 6): confident answer
                return {"content": "a spirit", "logprobs": [-0.01]}
            return {"content": "No relevant information found", "logprobs": [-0.1, -0.1]}
        return "a spirit"

    cfg = CoRAGConfig(decode_strategy="best_of_n", best_n=4, max_path_length=3)
    with ScriptedOpenAI([], default=reply) as llm:
        res = CoRAGAgent(client(llm), MemoryRetriever(), cfg).run(QUESTION)
    assert [s["subquery"] for s in res.path.steps()] == [
        "sampled question 4",
        "sampled question 5",
        "sampled question 6",
    ]
    assert res.path_score is not None and math.isclose(res.path_score, math.log(1 - math.exp(-0.01)))


def test_tree_search_expands_rolls_out_and_keeps_one_beam() -> None:
    counter = itertools.count()
    seen_scores: list[str] = []

    def reply(body: dict[str, Any]) -> Any:
        k = kind(body)
        if k == "subquery":
            return f"q{next(counter)}"
        if k == "score":
            seen_scores.append(prompt(body))
            best = "Q: q2\n" in prompt(body)
            return {"content": "a spirit" if best else "No relevant information found", "logprobs": [-0.2]}
        return "ans"

    cfg = CoRAGConfig(decode_strategy="tree_search", max_path_length=2, expand_size=4, num_rollouts=2)
    with ScriptedOpenAI([], default=reply) as llm:
        res = CoRAGAgent(client(llm), MemoryRetriever(), cfg).run(QUESTION)
    steps = res.path.steps()
    assert len(steps) == 2 and steps[0]["subquery"] == "q2"
    # depth 1: 4 children x 2 rollouts scored; depth 2: 4 children x 2 rollouts (no steps left) scored
    assert len(seen_scores) == 16
    assert res.llm_calls > 16
