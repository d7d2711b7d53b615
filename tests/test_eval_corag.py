"""`neorag eval corag` through the real CLI: HotpotQA slice ingested via --corpus_file, scripted LLM."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from app.cli import cli
from app.evaluation.corag_eval import fact_found, golden_facts, ground_truth, load_eval_file
from tests.support.backends import Backend
from tests.support.fake_openai import ScriptedOpenAI
from tests.support.reasoning import HOTPOT

ITEMS = json.loads(HOTPOT.read_text())


@pytest.fixture
def env(backend: Backend, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    settings = backend.settings(f"t_coragev_{uuid.uuid4().hex[:8]}")
    backend.claim(settings.graph_name)
    for key, value in backend.env(settings).items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("NEORAG_LLM_MAX_RETRIES", "0")
    yield settings.graph_name
    backend.drop(settings.graph_name)


def test_golden_facts_and_matching() -> None:
    facts = golden_facts(ITEMS[0])
    assert facts[0][0] == "Alû" and facts[1][0] == "Lilu (mythology)"
    assert facts[1][1].startswith("A lilu or lilû is a masculine Akkadian word for a spirit")
    musique = {
        "question": "q",
        "paragraphs": [
            {"title": "T", "paragraph_text": "Some text.", "is_supporting": True},
            {"title": "U", "paragraph_text": "Other.", "is_supporting": False},
        ],
    }
    assert golden_facts(musique) == [("T", "Some text.")]
    hit = {"title": "Lilu (mythology)", "contents": "Intro. " + facts[1][1] + " More."}
    assert fact_found(facts[1], [hit])
    assert not fact_found(facts[1], [{**hit, "title": "Other"}])  # same text under another title
    assert not fact_found(facts[0], [hit])
    assert ground_truth({"answers": ["a", "b"]}) == ["a", "b"] and ground_truth({"answer": "x"}) == ["x"]


def test_load_eval_file_rejects_junk(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('[{"nope": 1}]')
    with pytest.raises(Exception, match="no objects with a 'question'"):
        load_eval_file(bad)


def titles_of(question: str) -> list[str]:
    item = next(i for i in ITEMS if i["question"] == question)
    return list(dict.fromkeys(sf[0] for sf in item["supporting_facts"]))


def reply(body: dict[str, Any]) -> str:
    p = str(body["messages"][-1]["content"])
    if p.startswith("You are using a search engine"):
        question = p.split("## Main query to answer\n")[1].split("\n")[0]
        asked = p.count("Intermediate query ")
        titles = titles_of(question)
        return f"SubQuery: What is {titles[min(asked, len(titles) - 1)]}?"
    if "## Intermediate queries and answers" in p:
        question = p.split("## Main query\n")[1].split("\n")[0]
        item = next(i for i in ITEMS if i["question"] == question)
        return f"Final Answer: {item['answer']}" if item is not ITEMS[3] else "Final Answer: maybe"
    return "some sub-answer"


def test_eval_corag_recall_vs_naive_and_chart(
    env: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    save = tmp_path / "out" / "corag.json"
    monkeypatch.delenv("NEORAG_LLM_BASE_URL", raising=False)
    with ScriptedOpenAI([], default=reply) as llm:  # the endpoint given CoRAG-style on the command line
        res = CliRunner().invoke(
            cli,
            [
                "eval",
                "corag",
                "--vllm_api_base",
                llm.base_url,
                "--vllm_api_key",
                "token-123",
                "--graph_api_url",
                "http://localhost:8023/retrieve",
                "--eval_file",
                str(HOTPOT),
                "--save_file",
                str(save),
                "--corpus_file",
                str(HOTPOT),
                "--calc_recall",
                "--enable_naive_retrieval",
                "--max_path_length",
                "2",
                "--top_k",
                "3",
                "--num_contexts",
                "6",
            ],
        )
    assert res.exit_code == 0, res.output
    out = json.loads(save.read_text())
    summary, samples = out[0], out[1:]
    assert summary["summary"] is True and summary["num_samples"] == 4 and len(samples) == 4
    for key in ("avg_time", "total_time", "corag_micro_recall", "naive_micro_recall", "golden_facts"):
        assert key in summary
    for s in samples:
        assert set(s) >= {
            "question",
            "answer",
            "ground_truth",
            "reasoning_steps",
            "time",
            "corag_recall",
            "naive_recall",
        }
        assert len(s["reasoning_steps"]) == 2 and set(s["reasoning_steps"][0]) == {
            "subquery",
            "subanswer",
            "doc_ids",
        }
        assert s["corag_recall"] == pytest.approx(s["corag_found"] / s["golden_facts"])
        assert s["time"]["total"] >= s["time"]["corag"] > 0
    found = sum(s["corag_found"] for s in samples)
    assert summary["corag_micro_recall"] == pytest.approx(found / summary["golden_facts"], abs=1e-4)
    assert summary["golden_facts"] == sum(len(golden_facts(i)) for i in ITEMS)
    # sub-queries name the supporting pages, so the chain finds most golden sentences
    assert summary["corag_micro_recall"] >= 0.5
    assert summary["naive_top_k"] == 6
    assert [s["answer"] for s in samples] == [
        ITEMS[0]["answer"],
        ITEMS[1]["answer"],
        ITEMS[2]["answer"],
        "maybe",
    ]
    assert summary["answer_hit_rate"] == 0.75
    assert save.with_suffix(".png").read_bytes()[:4] == b"\x89PNG"
    assert "CoRAG micro recall" in res.output and "naive micro recall" in res.output


def test_eval_corag_bad_strategy(env: str, tmp_path: Path) -> None:
    res = CliRunner().invoke(
        cli,
        [
            "eval",
            "corag",
            "--eval_file",
            str(HOTPOT),
            "--save_file",
            str(tmp_path / "x.json"),
            "--decode_strategy",
            "beam",
        ],
    )
    assert res.exit_code != 0 and "decode_strategy" in str(res.exception)
