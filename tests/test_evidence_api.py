"""POST /evidence and NeoRAGEvidenceRetriever over a real store: PathQuestion KB + ingested HotpotQA text."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from app.core.config import Settings
from app.reasoning.convinse import NeoRAGEvidenceRetriever
from app.services.container import build_services
from tests.support.apps import app_client
from tests.support.backends import Backend
from tests.support.reasoning import HOTPOT, PQ_KB, PQ_QUESTIONS, module_settings, store_down_client

KEYS = {"evidence_text", "source", "disambiguations", "wikidata_entities", "retrieved_for_entity"}
PQ_Q = "which nationality is frederica_of_mecklenburg-strelitz 's couple ?"
HQ_Q = "If Gallu is a demon Lilu is what?"


@pytest.fixture(scope="module")
def both(request: pytest.FixtureRequest, backend: Backend) -> Iterator[Settings]:
    """One graph holding the PQ-2H KG (dataset pq2h) and the 40 HotpotQA paragraphs as chunks."""
    from ingest.kg import load_path
    from ingest.pipeline import ingest_path

    settings = module_settings(backend, f"t_evs_{uuid.uuid4().hex[:8]}")
    backend.claim(settings.graph_name)
    services = build_services(settings, start_embedded=False)

    def build() -> None:
        load_path(services.store, PQ_QUESTIONS, "pq2h", kb=PQ_KB)
        ingest_path(services, HOTPOT)

    with backend.shared_graph(request, settings, build):
        yield settings
    services.close()


def check_format(evs: list[dict[str, Any]]) -> None:
    for ev in evs:
        assert set(ev) == KEYS
        assert ev["source"] in ("kb", "text")
        assert isinstance(ev["evidence_text"], str) and ev["evidence_text"]
        assert all(isinstance(d, list) and len(d) == 2 for d in ev["disambiguations"])
        assert all(set(e) == {"id", "label"} for e in ev["wikidata_entities"])
        assert set(ev["retrieved_for_entity"]) == {"id", "label"}
        n = len({e["id"] for e in ev["wikidata_entities"]})
        assert n != 1 and n <= 10


def test_kb_facts_around_linked_entities(both: Settings) -> None:
    with app_client(both) as client:  # no LLM configured: /evidence does not need one
        r = client.post("/evidence", json={"question": PQ_Q, "sources": ["kb"], "dataset": "pq2h"})
    assert r.status_code == 200, r.text
    body = r.json()
    evs = body["evidences"]
    check_format(evs)
    assert body["linked_entities"] == ["frederica_of_mecklenburg-strelitz"]
    texts = [e["evidence_text"] for e in evs]
    assert "frederica of mecklenburg-strelitz, spouse, ernest augustus i of hanover" in texts
    assert all(e["source"] == "kb" for e in evs)
    assert all(e["retrieved_for_entity"]["id"] == "frederica_of_mecklenburg-strelitz" for e in evs)
    assert body["scores"] == sorted(body["scores"], reverse=True) and len(body["scores"]) == len(evs)


def test_sample_scope_and_structured_representation(both: Settings) -> None:
    with app_client(both) as client:
        r = client.post(
            "/evidence",
            json={
                "structured_representation": "ernest_augustus_i_of_hanover nationality",
                "sources": ["kb"],
                "dataset": "pq2h",
                "sample_id": "pq2h_questions-0",
            },
        )
    assert r.status_code == 200, r.text
    texts = [e["evidence_text"] for e in r.json()["evidences"]]
    assert texts[0] == "ernest augustus i of hanover, nationality, united kingdom"


def test_text_chunks_prefixed_with_title_and_top_e(both: Settings) -> None:
    with app_client(both) as client:
        r = client.post("/evidence", json={"question": HQ_Q, "sources": ["text"], "max_evidences": 3})
    assert r.status_code == 200, r.text
    evs = r.json()["evidences"]
    check_format(evs)
    assert 1 <= len(evs) <= 3 and all(e["source"] == "text" for e in evs)
    titles = [e["retrieved_for_entity"]["label"] for e in evs]
    assert all(e["evidence_text"].startswith(f"{t}, ") for e, t in zip(evs, titles, strict=True))
    assert {"Lilu (mythology)", "Alû"} & set(titles)


def test_both_sources_mix(both: Settings) -> None:
    with app_client(both) as client:
        r = client.post("/evidence", json={"question": PQ_Q + " Lilu demon", "max_evidences": 100})
    assert r.status_code == 200
    sources = {e["source"] for e in r.json()["evidences"]}
    assert sources == {"kb", "text"}


@pytest.mark.parametrize(
    "body,field",
    [
        ({}, "question"),
        ({"question": "  ", "structured_representation": ""}, "question"),
        ({"question": PQ_Q, "sources": ["table"]}, "sources.0"),
        ({"question": PQ_Q, "sources": []}, "sources"),
        ({"question": PQ_Q, "max_evidences": 0}, "max_evidences"),
        ({"question": PQ_Q, "sample_id": "pq2h_questions-0"}, "dataset"),
    ],
)
def test_bad_input_is_422(both: Settings, body: dict[str, Any], field: str) -> None:
    with app_client(both) as client:
        r = client.post("/evidence", json=body)
    assert r.status_code == 422 and r.json()["field"] == field


def test_unknown_dataset_is_404(both: Settings) -> None:
    with app_client(both) as client:
        r = client.post("/evidence", json={"question": PQ_Q, "dataset": "nope"})
    assert r.status_code == 404 and r.json()["field"] == "dataset"


def test_store_down_is_503(both: Settings, backend: Backend) -> None:
    with store_down_client(backend, both) as client:
        r = client.post("/evidence", json={"question": PQ_Q})
    assert r.status_code == 503 and r.json()["error"] == "store_unavailable"


def test_convinse_class_sets_top_evidences(both: Settings) -> None:
    services = build_services(both, start_embedded=False)
    try:
        ers = NeoRAGEvidenceRetriever(services, {"evs_max_evidences": 5})
        turn: dict[str, Any] = {"question": "ignored", "structured_representation": PQ_Q}
        out = ers.inference_on_turn(turn, ["kb", "text"])
        assert out is turn["top_evidences"] and 1 <= len(out) <= 5
        check_format(out)
        assert any(e["source"] == "kb" for e in out)
        turn2: dict[str, Any] = {"structured_representation": PQ_Q}
        assert ers.inference_on_turn(turn2, ["table"]) == [] and turn2["top_evidences"] == []
    finally:
        services.close()
