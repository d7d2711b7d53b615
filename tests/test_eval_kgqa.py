"""`neorag eval kgqa` through the real CLI: PathQuestion loaded by the KG loader, real store, scripted LLM."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from app.cli import cli
from app.core.errors import LLMUnavailable
from tests.support.backends import Backend
from tests.support.fake_openai import ScriptedOpenAI
from tests.support.reasoning import PQ_KB, PQ_QUESTIONS

LINES = [line.split("\t") for line in PQ_QUESTIONS.read_text().splitlines()[:3]]


@pytest.fixture
def env(backend: Backend, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    settings = backend.settings(f"t_kgqa_{uuid.uuid4().hex[:8]}")
    backend.claim(settings.graph_name)
    for key, value in backend.env(settings).items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("NEORAG_LLM_MAX_RETRIES", "0")
    monkeypatch.delenv("NEORAG_LLM_BASE_URL", raising=False)
    yield settings.graph_name
    backend.drop(settings.graph_name)


def run(args: list[str]) -> Any:
    return CliRunner().invoke(
        cli, ["eval", "kgqa", str(PQ_QUESTIONS), "--kb", str(PQ_KB), "--dataset", "pq2h", *args]
    )


def gold(line: list[str]) -> tuple[list[tuple[str, str, str]], str]:
    parts = line[2].split("#<end>#")[0].split("#")
    path = [(parts[i], parts[i + 1], parts[i + 2]) for i in range(0, len(parts) - 2, 2)]
    return path, path[-1][2]


def oracle(body: dict[str, Any]) -> str:
    """Follows the gold path of the asked question; answers question 3 wrongly on purpose."""
    p = str(body["messages"][-1]["content"])
    for idx, line in enumerate(LINES):
        if f"Question: {line[0]}\n" not in p:
            continue
        path, answer = gold(line)
        for h, r, _t in path:
            if f"Candidate relations of {h} " in p:
                return r
        if "List the triples" in p:
            return "\n".join(f"({h}, {r}, {t})" for h, r, t in path)
        if f", {path[-1][1]}, {answer})" in p:
            return "Final Answer: nobody" if idx == 2 else f"Final Answer: {answer}"
        return "Continue"
    return "Continue"


def test_structgpt_hits_f1_tokens_and_chart(
    env: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "kgqa.json"
    with ScriptedOpenAI([], default=oracle) as llm:
        monkeypatch.setenv("NEORAG_LLM_BASE_URL", llm.base_url)
        res = run(["--limit", "3", "--out", str(out)])
    assert res.exit_code == 0, res.output
    report = json.loads(out.read_text())
    s, rows = report["summary"], report["results"]
    assert [r["hits@1"] for r in rows] == [1.0, 1.0, 0.0]
    assert s["hits@1"] == pytest.approx(2 / 3, abs=1e-4) and s["f1"] == pytest.approx(2 / 3, abs=1e-4)
    assert rows[0]["answer"] == "united_kingdom" and rows[0]["gold"] == ["united_kingdom"]
    assert rows[0]["triples"] == [list(t) for t in gold(LINES[0])[0]]
    assert all(r["tokens"] > 0 and r["llm_calls"] == 5 for r in rows)
    assert s["tokens_per_question"] > 0 and s["llm_calls_per_question"] == 5 and s["latency_mean_s"] > 0
    png = out.with_suffix(".png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert "Hits@1 0.667" in res.output


def test_baseline_needs_no_llm(env: str, tmp_path: Path) -> None:
    out = tmp_path / "base.json"
    res = run(["--method", "baseline", "--limit", "10", "--out", str(out), "--scope", "graph"])
    assert res.exit_code == 0, res.output
    report = json.loads(out.read_text())
    rows = report["results"]
    assert len(rows) == 10 and all(r["tokens"] == 0 for r in rows)
    assert rows[0]["predictions"] == ["united_kingdom"] and rows[0]["hits@1"] == 1.0  # spouse -> nationality
    assert report["summary"]["hits@1"] == pytest.approx(sum(r["hits@1"] for r in rows) / 10, abs=1e-4)
    assert out.with_suffix(".png").exists()


def test_structgpt_without_llm_fails_with_one_line(env: str, tmp_path: Path) -> None:
    res = run(["--limit", "1", "--out", str(tmp_path / "x.json")])
    assert res.exit_code != 0 and isinstance(res.exception, LLMUnavailable)
    assert "NEORAG_LLM_BASE_URL" in str(res.exception)


def test_bad_method_is_rejected(env: str) -> None:
    res = run(["--method", "magic"])
    assert res.exit_code != 0 and "--method" in str(res.exception)
