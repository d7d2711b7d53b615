"""POST /reason/structgpt end to end: real app, PathQuestion loaded with the KG loader, scripted LLM."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from app.core.config import Settings
from app.services.container import build_services
from tests.support.apps import app_client
from tests.support.backends import Backend
from tests.support.fake_openai import ScriptedOpenAI
from tests.support.reasoning import PQ_KB, PQ_QUESTIONS, module_settings, store_down_client, with_llm

Q0 = "which nationality is frederica_of_mecklenburg-strelitz 's couple ?"
TOPIC = "frederica_of_mecklenburg-strelitz"
SAMPLE = "pq2h_questions-0"


@pytest.fixture(scope="module")
def pq(request: pytest.FixtureRequest, backend: Backend) -> Iterator[Settings]:
    """PQ-2H questions + KB loaded once as dataset ``pq2h`` (per-sample subgraphs and the whole graph)."""
    from ingest.kg import load_path

    settings = module_settings(backend, f"t_sgpt_{uuid.uuid4().hex[:8]}")
    backend.claim(settings.graph_name)
    services = build_services(settings, start_embedded=False)

    def build() -> None:
        report = load_path(services.store, PQ_QUESTIONS, "pq2h", kb=PQ_KB)
        assert report.samples_loaded == 60

    with backend.shared_graph(request, settings, build):
        yield settings
    services.close()


def text(body: dict[str, Any]) -> str:
    return str(body["messages"][-1]["content"])


def oracle(body: dict[str, Any]) -> str:
    """Answers like a good model for Q0: spouse, then nationality, then the answer and the filter."""
    p = text(body)
    if f"Candidate relations of {TOPIC}" in p:
        return "spouse"
    if "Candidate relations of ernest_augustus_i_of_hanover" in p:
        return "nationality"
    if "List the triples" in p:
        return (
            f"({TOPIC}, spouse, ernest_augustus_i_of_hanover)\n"
            "(ernest_augustus_i_of_hanover, nationality, united_kingdom)"
        )
    if "(ernest_augustus_i_of_hanover, nationality, united_kingdom)" in p:
        return "Final Answer: united_kingdom"
    return "Continue"


def test_no_llm_is_503_with_hint(pq: Settings) -> None:
    with app_client(pq) as client:
        r = client.post("/reason/structgpt", json={"question": Q0, "topic_entities": [TOPIC]})
    assert r.status_code == 503 and "NEORAG_LLM_BASE_URL" in r.json()["hint"]


@pytest.mark.parametrize(
    "body,field,status",
    [
        ({"topic_entities": [TOPIC]}, "question", 422),
        ({"question": " \n\t", "topic_entities": [TOPIC]}, "question", 422),  # refused by its pattern
        ({"question": Q0}, "topic_entities", 422),
        ({"question": Q0, "topic_entities": []}, "topic_entities", 422),
        ({"question": Q0, "topic_entities": [" "]}, "topic_entities.0", 422),  # the blank item
        ({"question": Q0, "topic_entities": [TOPIC], "width": 0}, "width", 422),
        ({"question": Q0, "topic_entities": [TOPIC], "max_depth": 0}, "max_depth", 422),
        ({"question": Q0, "topic_entities": [TOPIC], "sample_id": SAMPLE}, "dataset", 422),
        ({"question": Q0, "topic_entities": [TOPIC], "dataset": "nope"}, "dataset", 404),
        (
            {"question": Q0, "topic_entities": [TOPIC], "dataset": "pq2h", "sample_id": "nope"},
            "sample_id",
            404,
        ),
    ],
)
def test_bad_input_names_the_field(pq: Settings, body: dict[str, Any], field: str, status: int) -> None:
    with ScriptedOpenAI() as llm, app_client(with_llm(pq, llm.base_url)) as client:
        r = client.post("/reason/structgpt", json=body)
        assert not llm.requests
    assert r.status_code == status, r.text
    assert r.json()["field"] == field


@pytest.mark.parametrize("scope", [{"dataset": "pq2h", "sample_id": SAMPLE}, {"dataset": "pq2h"}, {}])
def test_two_hop_answer_with_filtered_triples(pq: Settings, scope: dict[str, str]) -> None:
    with ScriptedOpenAI([], default=oracle) as llm, app_client(with_llm(pq, llm.base_url)) as client:
        r = client.post(
            "/reason/structgpt", json={"question": Q0, "topic_entities": [TOPIC.upper()], **scope}
        )
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["answer"] == "united_kingdom"
    assert body["triples"] == [
        [TOPIC, "spouse", "ernest_augustus_i_of_hanover"],
        ["ernest_augustus_i_of_hanover", "nationality", "united_kingdom"],
    ]
    assert [s["entity"] for s in body["steps"]] == [TOPIC, "ernest_augustus_i_of_hanover"]
    assert body["steps"][1]["relations_chosen"] == ["nationality"]
    assert "spouse (inverse)" in body["steps"][1]["relations_offered"]
    assert body["llm_calls"] == 5 and body["usage"]["calls"] == 5 and body["usage"]["prompt_tokens"] > 0


def test_unparseable_relation_choice_falls_back_to_bm25(pq: Settings) -> None:
    def reply(body: dict[str, Any]) -> str:
        p = text(body)
        if "Candidate relations" in p:
            return "Hmm, maybe something about family?"  # names no offered relation
        if "List the triples" in p:
            return "no idea"
        return "Final Answer: united_kingdom" if "united_kingdom)" in p else "Continue"

    with ScriptedOpenAI([], default=reply) as llm, app_client(with_llm(pq, llm.base_url)) as client:
        r = client.post(
            "/reason/structgpt",
            json={
                "question": Q0,
                "topic_entities": [TOPIC],
                "dataset": "pq2h",
                "sample_id": SAMPLE,
                "bidirectional": False,
            },
        )
    body = r.json()
    assert r.status_code == 200, r.text
    assert [s["relations_chosen"] for s in body["steps"]] == [["spouse"], ["nationality"]]
    assert all("(inverse)" not in rel for s in body["steps"] for rel in s["relations_offered"])
    assert body["answer"] == "united_kingdom"
    # the filter reply named no triple: the triples mentioning the answer are kept
    assert body["triples"] == [["ernest_augustus_i_of_hanover", "nationality", "united_kingdom"]]


def test_llm_timeout_and_http_500_are_503(pq: Settings) -> None:
    with (
        ScriptedOpenAI([{"sleep": 3, "content": "spouse"}]) as llm,
        app_client(with_llm(pq, llm.base_url, timeout_s=0.5)) as client,
    ):
        r = client.post("/reason/structgpt", json={"question": Q0, "topic_entities": [TOPIC]})
    assert r.status_code == 503 and r.json()["error"] == "llm_unavailable" and "Timeout" in r.json()["reason"]
    with ScriptedOpenAI(["spouse", {"status": 500}]) as llm, app_client(with_llm(pq, llm.base_url)) as client:
        r = client.post("/reason/structgpt", json={"question": Q0, "topic_entities": [TOPIC]})
    assert r.status_code == 503 and r.json()["error"] == "llm_unavailable"


def test_store_down_is_503(pq: Settings, backend: Backend) -> None:
    with ScriptedOpenAI([], default=oracle) as llm, \
            store_down_client(backend, with_llm(pq, llm.base_url)) as client:
        r = client.post(
            "/reason/structgpt", json={"question": Q0, "topic_entities": [TOPIC], "dataset": "pq2h"}
        )
    assert r.status_code == 503 and r.json()["error"] == "store_unavailable"
