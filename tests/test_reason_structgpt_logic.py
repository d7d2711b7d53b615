"""StructGPT loop logic over an in-memory PathQuestion KG, with the scripted OpenAI server as the LLM."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from app.reasoning.structgpt import (
    StructGPTConfig,
    StructGPTReasoner,
    keep_relation,
    parse_choice,
    parse_filtered,
    parse_final,
    serialise,
)
from app.services.llm import LLMClient
from tests.support.fake_openai import ScriptedOpenAI

KB = Path(__file__).parent / "fixtures" / "reasoning" / "pq2h_kb.txt"


class MemoryKG:
    """A KGView over a list of triples."""

    def __init__(self, triples: list[tuple[str, str, str]]) -> None:
        self.triples_ = triples
        self.calls = 0

    def resolve(self, entity: str) -> str | None:
        names = {x for h, _, t in self.triples_ for x in (h, t)}
        if entity in names:
            return entity
        low = {n.lower(): n for n in names}
        return low.get(entity.strip().lower())

    def relations(self, entity: str) -> list[tuple[str, str]]:
        out = {(r, "out") for h, r, _ in self.triples_ if h == entity}
        inn = {(r, "in") for _, r, t in self.triples_ if t == entity}
        return sorted(out | inn)

    def triples(self, entity: str, relation: str, direction: str) -> list[tuple[str, str, str]]:
        self.calls += 1
        if direction == "out":
            return [x for x in self.triples_ if x[0] == entity and x[1] == relation]
        return [x for x in self.triples_ if x[2] == entity and x[1] == relation]


def kb() -> MemoryKG:
    rows = [tuple(line.split("\t")) for line in KB.read_text().splitlines() if line.count("\t") == 2]
    return MemoryKG(rows)  # type: ignore[arg-type]


def prompt(body: dict[str, Any]) -> str:
    return str(body["messages"][-1]["content"])


def client(llm: ScriptedOpenAI) -> LLMClient:
    return LLMClient(llm.base_url, "k", "scripted", timeout_s=5, max_retries=0)


def test_pure_helpers() -> None:
    assert keep_relation("people.person.spouse") and keep_relation("common.topic.notable_types")
    assert not keep_relation("type.object.name") and not keep_relation("common.topic.image")
    offered = [("spouse", "out"), ("spouse", "in"), ("nationality", "out"), ("children", "out")]
    assert parse_choice("Nationality; spouse (inverse)", offered, 5) == [
        ("nationality", "out"),
        ("spouse", "in"),
    ]
    assert parse_choice("1. children\n2. spouse\n3. nationality", offered, 2) == [
        ("children", "out"),
        ("spouse", "out"),
    ]
    assert parse_choice("I cannot decide", offered, 5) == []
    assert parse_final("Final Answer: united_kingdom.") == "united_kingdom"
    assert parse_final("Continue") is None and parse_final("final answer:") is None
    text = serialise([("a", "r", "b"), ("c", "r", "d e f"), ("g", "r", "h")], budget_words=8)
    assert text == "(a, r, b); (c, r, d e f)"
    triples = [("a", "r", "b"), ("c", "r", "d")]
    assert parse_filtered("(c, r, d)\nnothing else", triples) == [("c", "r", "d")]


def test_two_hop_question_answered_with_filtered_triples() -> None:
    graph = kb()

    def reply(body: dict[str, Any]) -> str:
        p = prompt(body)
        if "Candidate relations of frederica_of_mecklenburg-strelitz" in p:
            return "spouse"
        if "Candidate relations of ernest_augustus_i_of_hanover" in p:
            return "nationality"
        if "List the triples" in p:
            return (
                "(frederica_of_mecklenburg-strelitz, spouse, ernest_augustus_i_of_hanover)\n"
                "(ernest_augustus_i_of_hanover, nationality, united_kingdom)"
            )
        if "nationality, united_kingdom" in p:
            return "Final Answer: united_kingdom"
        return "Continue"

    with ScriptedOpenAI([], default=reply) as llm:
        res = StructGPTReasoner(client(llm), graph, StructGPTConfig()).run(
            "which nationality is frederica_of_mecklenburg-strelitz 's couple ?",
            ["Frederica_of_Mecklenburg-Strelitz"],
        )
    assert res.answer == "united_kingdom"
    assert ("ernest_augustus_i_of_hanover", "nationality", "united_kingdom") in res.triples
    assert len(res.triples) == 2
    assert [s["entity"] for s in res.steps] == [
        "frederica_of_mecklenburg-strelitz",
        "ernest_augustus_i_of_hanover",
    ]
    assert res.steps[0]["relations_chosen"] == ["spouse"]
    assert "spouse (inverse)" in res.steps[1]["relations_offered"]  # bidirectional
    assert res.llm_calls == 5 and res.usage["calls"] == 5


def test_malformed_choice_falls_back_to_bm25_and_depth_limit_stops() -> None:
    graph = kb()
    with ScriptedOpenAI([], default="I do not know which one.") as llm:
        cfg = StructGPTConfig(max_depth=2, bidirectional=False)
        res = StructGPTReasoner(client(llm), graph, cfg).run(
            "which nationality is frederica_of_mecklenburg-strelitz 's couple ?",
            ["frederica_of_mecklenburg-strelitz"],
        )
        bodies = list(llm.requests)
    # BM25 fallback picked one relation per entity; nothing in the replies named one.
    assert all(len(s["relations_chosen"]) == 1 for s in res.steps)
    assert all("(inverse)" not in r for s in res.steps for r in s["relations_offered"])
    # two hops, each with a choice, its retry (the reply named no relation) and an answer-or-continue call,
    # then a forced answer and the filter pass
    assert len(res.steps) >= 2 and res.llm_calls == 2 * len(res.steps) + len(res.steps) + 2
    assert all(s["chosen_by"] == "bm25_fallback" for s in res.steps)
    assert "Final Answer" in prompt(bodies[-2]) and "List the triples" in prompt(bodies[-1])
    assert res.answer == "I do not know which one."
    assert res.triples  # filter reply unparseable -> all retrieved triples kept


def test_loops_are_not_revisited() -> None:
    graph = MemoryKG([("a", "spouse", "b"), ("b", "spouse", "a")])
    with ScriptedOpenAI(
        [], default=lambda b: "spouse; spouse (inverse)" if "Candidate" in prompt(b) else "Continue"
    ) as llm:
        res = StructGPTReasoner(client(llm), graph, StructGPTConfig(max_depth=3)).run(
            "who is a's spouse?", ["a"]
        )
    entities = [s["entity"] for s in res.steps]
    assert entities == ["a", "b"]  # b's spouse is a, already expanded: the walk ends instead of looping
    assert len(res.retrieved) == 2


def test_unknown_topic_entity_answers_without_triples() -> None:
    with ScriptedOpenAI([], default="Final Answer: nobody") as llm:
        res = StructGPTReasoner(client(llm), kb(), StructGPTConfig()).run("who?", ["no_such_entity"])
    assert res.answer == "nobody" and res.triples == [] and res.steps == [] and res.llm_calls == 1


def test_width_bounds_choices_and_parallel_fetch() -> None:
    graph = kb()
    with ScriptedOpenAI(
        [],
        default=lambda b: (
            "; ".join(
                re.findall(r"[a-z_]+(?: \(inverse\))?", prompt(b).split("direction): ")[1].split("\n")[0])
            )
            if "Candidate" in prompt(b)
            else "Final Answer: x"
        ),
    ) as llm:
        res = StructGPTReasoner(client(llm), graph, StructGPTConfig(width=2)).run(
            "who?", ["ernest_augustus_i_of_hanover"]
        )
    assert len(res.steps) == 1 and len(res.steps[0]["relations_chosen"]) == 2
    assert graph.calls == 2
