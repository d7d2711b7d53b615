"""POST /evidence with a conversation history: CONVINSE's structured representation written by the LLM
(scripted endpoint), and what happens without an LLM, with invalid replies, an LLM error or a bad history."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from app.core.config import Settings
from app.services.container import build_services
from app.store.embedded import ServerInfo
from tests.support.apps import app_client
from tests.support.backends import FalkorBackend
from tests.support.fake_openai import ScriptedOpenAI
from tests.support.reasoning import PQ_KB, PQ_QUESTIONS, module_settings, with_llm

TOPIC = "frederica_of_mecklenburg-strelitz"
BODY: dict[str, Any] = {
    "question": "and the nationality of her husband?", "dataset": "pq2h", "sources": ["kb"],
    "history": [{"role": "user", "content": f"who was {TOPIC} married to?"},
                {"role": "assistant", "content": "ernest_augustus_i_of_hanover"}]}
SR = {"context_entity": TOPIC, "question_entity": "ernest_augustus_i_of_hanover", "relation": "nationality",
      "answer_type": "country"}


@pytest.fixture(scope="module")
def pq(falkor_server: ServerInfo) -> Iterator[Settings]:
    from ingest.kg import load_path

    settings = module_settings(FalkorBackend(falkor_server), f"t_sr_{uuid.uuid4().hex[:8]}")
    services = build_services(settings, start_embedded=False)
    load_path(services.store, PQ_QUESTIONS, "pq2h", kb=PQ_KB)
    yield settings
    services.store.drop_graph()  # type: ignore[attr-defined]
    services.close()


def test_history_becomes_a_structured_representation(pq: Settings) -> None:
    with ScriptedOpenAI([json.dumps(SR)]) as llm, app_client(with_llm(pq, llm.base_url)) as client:
        r = client.post("/evidence", json=BODY)
    out = r.json()
    assert r.status_code == 200 and out["structured_representation"] == SR
    assert out["query"] == " ".join(SR.values())
    assert "ernest_augustus_i_of_hanover" in out["linked_entities"]
    assert any(ev["evidence_text"] == "ernest augustus i of hanover, nationality, united kingdom"
               for ev in out["evidences"])
    sent = llm.requests[0]
    assert sent["response_format"]["type"] == "json_schema"
    assert BODY["question"] in sent["messages"][-1]["content"]


def test_without_llm_the_history_is_ignored_with_a_warning(pq: Settings) -> None:
    with app_client(pq) as client:
        out = client.post("/evidence", json=BODY).json()
    assert out["query"] == BODY["question"] and out["warnings"][0]["type"] == "no_llm"


@pytest.mark.parametrize("replies", [["not json", '{"context_entity": 3}'], [{"status": 500}]])
def test_invalid_replies_or_llm_errors_use_the_question(pq: Settings, replies: list[Any]) -> None:
    with ScriptedOpenAI(replies, default={"status": 500}) as llm:
        with app_client(with_llm(pq, llm.base_url)) as client:
            r = client.post("/evidence", json=BODY)
    out = r.json()
    assert r.status_code == 200 and out["query"] == BODY["question"]
    assert "structured_representation" not in out and out["warnings"][0]["type"] == "sr_failed"


@pytest.mark.parametrize("history,field", [([{"role": "system", "content": "x"}], "history.0.role"),
                                           ([{"role": "user", "content": ""}], "history.0.content"),
                                           ([{"role": "user", "content": "x"}] * 21, "history")])
def test_bad_history_is_422(pq: Settings, history: list[dict[str, str]], field: str) -> None:
    with ScriptedOpenAI() as llm, app_client(with_llm(pq, llm.base_url)) as client:
        r = client.post("/evidence", json={**BODY, "history": history})
        assert not llm.requests
    assert r.status_code == 422 and r.json()["field"] == field
