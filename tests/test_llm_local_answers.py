"""`llm` tier, answers and agents on the bundled 135M model (NEORAG_LLM_BASE_URL=local) over a real graph.

Contracts, not wisdom: cited answers cite only returned sources (JSON and stream); a follow-up question goes
through the rewrite; StructGPT, CoRAG (greedy) and /evidence complete on a PathQuestion and a HotpotQA sample
with well-formed steps; the LLM's structured replies are counted in /diagnostics.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.retrieval.citations import Attributor
from app.retrieval.text import sentences
from app.services.container import build_services
from app.store.embedded import ServerInfo
from tests.support.apps import app_client
from tests.support.backends import FalkorBackend
from tests.support.local_llm import LocalModel
from tests.support.reasoning import CORAG_QUESTION, HOTPOT, PQ_KB, PQ_QUESTIONS, module_settings

pytestmark = pytest.mark.llm
NOTES = Path(__file__).parent / "fixtures" / "ingest" / "notes.txt"
PQ_Q = "which nationality is frederica_of_mecklenburg-strelitz 's couple ?"
PQ_TOPIC = "frederica_of_mecklenburg-strelitz"
_MARK = re.compile(r"\[S(\d+)\]")


@pytest.fixture(scope="module")
def client(falkor_server: ServerInfo, local_llm: LocalModel) -> Iterator[TestClient]:
    """One graph: notes.txt and the 40 HotpotQA paragraphs (heuristic ingest) and the PQ-2H KG; the app on
    the local model, answers and agent replies capped at 96 tokens (a 135M model rambles)."""
    from ingest.kg import load_path
    from ingest.pipeline import ingest_path

    base = module_settings(FalkorBackend(falkor_server), f"t_llm_{uuid.uuid4().hex[:8]}")
    services = build_services(base, start_embedded=False)
    ingest_path(services, NOTES)
    ingest_path(services, HOTPOT)
    load_path(services.store, PQ_QUESTIONS, "pq2h", kb=PQ_KB)
    settings = local_llm.settings(base, llm_max_tokens=96, query_answer_max_tokens=64, retrieval_top_k=3)
    try:
        with app_client(settings) as c:
            yield c
    finally:
        services.store.drop_graph()  # type: ignore[attr-defined]
        services.close()


def _replies(client: TestClient, task: str) -> int:
    counts = client.get("/diagnostics").json()["llm"]["structured_output"]["replies"]
    return sum(v.get("first_try", 0) + v.get("after_retry", 0) + v.get("skipped", 0)
               for mode in counts.values() for t, v in mode.items() if t == task)


def test_diagnostics_show_the_local_model(client: TestClient, local_llm: LocalModel) -> None:
    llm = client.get("/diagnostics").json()["llm"]
    assert llm["configured"] and llm["base_url"] == "local" and llm["endpoint"] == local_llm.server.base_url
    local = llm["local"]
    assert local["model_file"].endswith(".gguf") and local["model_mb"] > 50 and local["alive"]
    assert local["ctx_per_slot"] == 2048 and local["parallel"] == 2
    # the supervisor's view (app/core/child.py), as the store's supervisor shows it
    assert local["state"] == "running" and local["pid"] == local_llm.server.pid
    assert local["restarts"] == local_llm.server.restarts and "last_error" in local


def test_query_json_and_stream_cite_only_returned_sources(client: TestClient) -> None:
    r = client.post("/query", json={"question": "When was the University of Basel founded?"})
    body = r.json()
    assert r.status_code == 200 and body["mode"] == "llm" and body["answer"].strip()
    ranks = {s["rank"] for s in body["sources"]}
    assert len(ranks) == 3 and {int(m) for m in _MARK.findall(body["answer"])} <= ranks
    # cited: every sentence a returned source supports carries a marker (the model's or NeoRAG's)
    check = Attributor(body["sources"])
    assert all(check.marker(s) == "" for s in sentences(body["answer"]))

    r = client.post("/query", json={"question": "Where does the Rhine end?", "stream": True})
    assert r.status_code == 200 and r.headers["x-neorag-mode"] == "llm"
    answer, sep, trailer = r.text.rpartition("[SOURCES]")
    assert sep and answer.strip() and "[ERROR]" not in answer
    listed = {int(m) for m in re.findall(r"rank=(\d+)", trailer)}
    assert len(listed) == 3 and {int(m) for m in _MARK.findall(answer)} <= listed


def test_query_with_history_goes_through_the_rewrite(client: TestClient) -> None:
    before = _replies(client, "query_rewrite")
    history = [{"role": "user", "content": "Tell me about Cologne Cathedral."},
               {"role": "assistant", "content": "It is a Gothic church in Cologne [S1]."}]
    r = client.post("/query", json={"question": "When was it completed?", "history": history})
    body = r.json()
    assert r.status_code == 200 and body["mode"] == "llm"
    assert _replies(client, "query_rewrite") == before + 1  # one rewrite, answered (or counted as skipped)
    rewrote = body.get("rewritten_question")
    assert rewrote is None or (rewrote.strip() and rewrote != "When was it completed?")
    if rewrote is None:  # the model's standalone question was the question itself, or the reply was skipped
        assert all(w["type"] != "llm_unavailable" for w in body["warnings"])


def test_structgpt_on_a_pathquestion_sample(client: TestClient) -> None:
    r = client.post("/reason/structgpt", json={
        "question": PQ_Q, "topic_entities": [PQ_TOPIC], "dataset": "pq2h", "sample_id": "pq2h_questions-0",
        "max_depth": 2, "width": 2})
    body = r.json()
    assert r.status_code == 200, r.text
    assert isinstance(body["answer"], str) and body["steps"] and body["llm_calls"] >= 3
    for step in body["steps"]:
        assert step["relations_offered"] and 1 <= len(step["relations_chosen"]) <= 2
        assert set(step["relations_chosen"]) <= set(step["relations_offered"])
        assert step["chosen_by"] in ("llm", "bm25_fallback")
        assert all(isinstance(t, list) and len(t) == 3 for t in step["triples"])
    assert body["steps"][0]["entity"] == PQ_TOPIC
    assert all(len(t) == 3 for t in body["triples"])


def test_corag_greedy_on_a_hotpotqa_sample(client: TestClient) -> None:
    r = client.post("/reason/corag", json={"question": CORAG_QUESTION, "decode_strategy": "greedy",
                                           "max_path_length": 2, "top_k": 3, "num_contexts": 3})
    body = r.json()
    assert r.status_code == 200, r.text
    assert isinstance(body["answer"], str) and body["decode_strategy"] == "greedy" and body["steps"]
    for step in body["steps"]:
        assert step["subquery"].strip() and isinstance(step["subanswer"], str) and step["subanswer"].strip()
        assert 1 <= len(step["doc_ids"]) <= 3 and all(":" in d for d in step["doc_ids"])
    assert len({s["subquery"].lower() for s in body["steps"]}) == len(body["steps"])  # no repeats


@pytest.mark.parametrize("body", [
    {"question": "and his wife's nationality?", "dataset": "pq2h", "sample_id": "pq2h_questions-0",
     "history": [{"role": "user", "content": f"who was {PQ_TOPIC} married to?"}]},
    {"question": "what is it?", "sources": ["text"],
     "history": [{"role": "user", "content": "Tell me about Lilu in Mesopotamian mythology."}]},
])
def test_evidence_with_history_on_pathquestion_and_hotpotqa(client: TestClient, body: dict[str, Any]) -> None:
    r = client.post("/evidence", json=body)
    out = r.json()
    assert r.status_code == 200, r.text
    sr = out.get("structured_representation")
    if sr is None:  # the model's reply was invalid twice: the question is used as is, with a warning
        assert out["query"] == body["question"] and out["warnings"][0]["type"] == "sr_failed"
    else:
        assert set(sr) == {"context_entity", "question_entity", "relation", "answer_type"}
        assert out["query"] and out["query"] == " ".join(v for v in sr.values() if v.strip())
    for ev in out["evidences"]:
        assert ev["source"] in body.get("sources", ["kb", "text"]) and ev["evidence_text"]
