"""POST /reason/corag end to end: real app, HotpotQA slice ingested in the embedded store, scripted LLM."""

from __future__ import annotations

import math
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from app.core.config import Settings
from app.services.container import build_services
from tests.support.apps import app_client
from tests.support.backends import Backend
from tests.support.fake_openai import ScriptedOpenAI
from tests.support.reasoning import CORAG_QUESTION, HOTPOT, module_settings, store_down_client, with_llm
from tests.support.reasoning import corag_call as kind

QUESTION = CORAG_QUESTION


@pytest.fixture(scope="module")
def hotpot(request: pytest.FixtureRequest, backend: Backend) -> Iterator[tuple[Settings, dict[str, str]]]:
    """The 40 HotpotQA paragraphs ingested once; yields settings and {chunk id: title}."""
    from ingest.pipeline import ingest_path

    settings = module_settings(backend, f"t_corag_{uuid.uuid4().hex[:8]}")
    backend.claim(settings.graph_name)
    services = build_services(settings, start_embedded=False)
    with backend.shared_graph(request, settings, lambda: ingest_path(services, HOTPOT)):
        titles = {str(r["id"]): str(r.get("title") or "") for r in _all_chunks(services)}
        yield settings, titles
    services.close()


def _all_chunks(services: Any) -> list[dict[str, Any]]:
    from app.retrieval.passages import retrieve_passages

    found: dict[str, dict[str, Any]] = {}
    for q in ("Lilu mythology spirit", "Gallu demon", "Alû Akkadian", "Christopher Nolan director"):
        for p in retrieve_passages(services, q, 20):
            found[p["id"]] = p
    return list(found.values())


def test_no_llm_is_503_with_hint(hotpot: tuple[Settings, dict[str, str]]) -> None:
    with app_client(hotpot[0]) as client:
        r = client.post("/reason/corag", json={"question": QUESTION})
    assert r.status_code == 503
    assert r.json()["error"] == "llm_unavailable" and "NEORAG_LLM_BASE_URL" in r.json()["hint"]


@pytest.mark.parametrize(
    "body,field",
    [
        ({}, "question"),
        ({"question": "   "}, "question"),
        ({"question": QUESTION, "decode_strategy": "beam"}, "decode_strategy"),
        ({"question": QUESTION, "top_k": 0}, "top_k"),
        ({"question": QUESTION, "max_path_length": 99}, "max_path_length"),
    ],
)
def test_bad_input_is_422_naming_the_field(
    hotpot: tuple[Settings, dict[str, str]], body: dict[str, Any], field: str
) -> None:
    with ScriptedOpenAI() as llm, app_client(with_llm(hotpot[0], llm.base_url)) as client:
        r = client.post("/reason/corag", json=body)
        assert not llm.requests
    assert r.status_code == 422 and r.json()["field"] == field


def test_greedy_chain_over_hybrid_retrieval(hotpot: tuple[Settings, dict[str, str]]) -> None:
    settings, titles = hotpot
    subqueries = iter(
        ["SubQuery: What is Gallu?", "What is Lilu in mythology?", "What kind of spirit is Lilu?"]
    )

    def reply(body: dict[str, Any]) -> str:
        k = kind(body)
        if k == "subquery":
            return next(subqueries)
        if k == "subanswer":
            return "a spirit" if "Lilu (mythology)" in str(body["messages"][-1]["content"]) else ""
        return "Final Answer: a spirit"

    with ScriptedOpenAI([], default=reply) as llm, app_client(with_llm(settings, llm.base_url)) as client:
        r = client.post("/reason/corag", json={"question": QUESTION, "top_k": 3})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["answer"] == "a spirit" and body["decode_strategy"] == "greedy"
    steps = body["steps"]
    assert [s["subquery"] for s in steps] == [
        "What is Gallu?",
        "What is Lilu in mythology?",
        "What kind of spirit is Lilu?",
    ]
    assert all(1 <= len(s["doc_ids"]) <= 3 for s in steps)
    lilu_step = steps[1]
    assert "Lilu (mythology)" in [titles.get(d) for d in lilu_step["doc_ids"]]
    assert lilu_step["subanswer"] == "a spirit"
    # an empty sub-answer reply becomes CoRAG's "No relevant information found"
    assert steps[0]["subanswer"] in ("a spirit", "No relevant information found")
    assert body["llm_calls"] == 7 and body["usage"]["calls"] == 7 and body["usage"]["total_tokens"] > 0


def test_best_of_n_scores_paths_by_logprobs(hotpot: tuple[Settings, dict[str, str]]) -> None:
    counter = iter(range(1000))

    def reply(body: dict[str, Any]) -> Any:
        k = kind(body)
        if k == "subquery":
            if body["temperature"] == 0.0:
                return "Who is Lilu?"
            return f"Lilu question {next(counter)}"
        if k == "score":
            good = "Lilu question 1\n" in str(body["messages"][-1]["content"])
            return (
                {"content": "a spirit", "logprobs": [-0.05]}
                if good
                else {"content": "No relevant information found", "logprobs": [-0.3, -0.2]}
            )
        return "a spirit"

    with ScriptedOpenAI([], default=reply) as llm, app_client(with_llm(hotpot[0], llm.base_url)) as client:
        r = client.post(
            "/reason/corag",
            json={
                "question": QUESTION,
                "decode_strategy": "best_of_n",
                "best_n": 3,
                "max_path_length": 2,
                "top_k": 2,
            },
        )
        score_calls = [b for b in llm.requests if kind(b) == "score"]
    assert r.status_code == 200, r.text
    body = r.json()
    # path 0 is greedy ("Who is Lilu?" then a re-sampled repeat: 0); path 1 is (1, 2); path 2 is (3, 4)
    assert [s["subquery"] for s in body["steps"]] == ["Lilu question 1", "Lilu question 2"]
    assert math.isclose(body["path_score"], math.log(1 - math.exp(-0.05)), rel_tol=1e-6)
    assert len(score_calls) == 3 and all(b["logprobs"] is True for b in score_calls)
    temps = [b["temperature"] for b in llm.requests if kind(b) == "subquery"]
    assert temps[0] == 0.0 and temps.count(0.7) == len(temps) - 2  # greedy path: 2 calls at 0


def test_tree_search_runs_end_to_end(hotpot: tuple[Settings, dict[str, str]]) -> None:
    counter = iter(range(1000))

    def reply(body: dict[str, Any]) -> Any:
        k = kind(body)
        if k == "subquery":
            return f"spirit question {next(counter)}"
        if k == "score":
            return {"content": "No relevant information found"}  # no logprobs: the documented stand-in
        return "a spirit"

    with ScriptedOpenAI([], default=reply) as llm, app_client(with_llm(hotpot[0], llm.base_url)) as client:
        r = client.post(
            "/reason/corag",
            json={"question": QUESTION, "decode_strategy": "tree_search", "max_path_length": 2, "top_k": 2},
        )
    assert r.status_code == 200, r.text
    body = r.json()
    assert len(body["steps"]) == 2 and body["path_score"] == 0.0
    assert body["steps"][0]["subquery"] == "spirit question 0"  # ties keep the first (greedy) child
    assert body["llm_calls"] > 20


def test_llm_timeout_is_503(hotpot: tuple[Settings, dict[str, str]]) -> None:
    with (
        ScriptedOpenAI([{"sleep": 3, "content": "late"}]) as llm,
        app_client(with_llm(hotpot[0], llm.base_url, timeout_s=0.5)) as client,
    ):
        r = client.post("/reason/corag", json={"question": QUESTION})
    assert r.status_code == 503 and r.json()["error"] == "llm_unavailable"
    assert "Timeout" in r.json()["reason"]


def test_llm_http_500_is_503(hotpot: tuple[Settings, dict[str, str]]) -> None:
    with (
        ScriptedOpenAI(["What is Lilu?", {"status": 500}]) as llm,
        app_client(with_llm(hotpot[0], llm.base_url)) as client,
    ):
        r = client.post("/reason/corag", json={"question": QUESTION})
    assert r.status_code == 503 and r.json()["error"] == "llm_unavailable"


def test_store_down_is_503(hotpot: tuple[Settings, dict[str, str]], backend: Backend) -> None:
    with (
        ScriptedOpenAI([], default="What is Lilu?") as llm,
        store_down_client(backend, with_llm(hotpot[0], llm.base_url)) as client,
    ):
        r = client.post("/reason/corag", json={"question": QUESTION})
    assert r.status_code == 503 and r.json()["error"] == "store_unavailable"
