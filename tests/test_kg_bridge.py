"""POST /kg/query (function-call bridge over the whole dataset graph), GET /actions, and the call parser."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from app.kg.bridge import INVALID, parse_calls, rank_relations
from tests.support.apps import app_client
from tests.support.backends import Backend
from tests.support.kg import kg_settings, shared_kg


@pytest.fixture(scope="module")
def client(request: pytest.FixtureRequest, backend: Backend) -> Iterator[TestClient]:
    settings = kg_settings(backend)
    with shared_kg(request, backend, settings), app_client(settings) as c:
        yield c


def test_parse_calls_accepts_bare_tagged_and_several() -> None:
    calls = parse_calls('<kg-query>get_relations("Justin Bieber")</kg-query> text '
                        '<kg-query>get_triples("Justin Bieber", ["a", "b", "a", "c", "d", "e"])</kg-query>')
    assert [c.name for c in calls] == ["get_relations", "get_triples"]
    assert calls[1].relations == ["a", "b", "c", "d"]  # de-duplicated, at most 4
    assert [c.entity for c in parse_calls('get_relations("x") get_relations(\'y\')')] == ["x", "y"]
    for bad in ['get_relations()', 'get_relations("x", "y")', 'get_triples("x")', 'get_triples("x", [])',
                'get_entities("x")', 'hello world', 'get_relations("x"', 'get_triples("x", "r")', '']:
        assert parse_calls(bad)[0].error == INVALID, bad


def test_rank_relations_prefers_question_terms() -> None:
    rels = ["people.person.sibling_s", "music.artist.album", "people.person.parents", "film.actor.film"]
    assert rank_relations(rels, "who is the sibling of justin bieber", 2)[0] == "people.person.sibling_s"
    assert rank_relations(rels, "", 3) == sorted(rels)[:3]


def test_get_relations_over_the_whole_dataset_graph(client: TestClient) -> None:
    resp = client.post("/kg/query", json={"query": 'get_relations("Justin Bieber")', "dataset": "webqsp",
                                          "question": "what albums did justin bieber release", "top_k": 10})
    assert resp.status_code == 200
    body = resp.json()
    rels = body["calls"][0]["result"]
    # union of WebQTrn-0 and WebQTrn-1 (whole graph, not one sample)
    assert set(rels) == {"music.artist.album", "people.person.sibling_s", "people.person.parents",
                         "music.artist.label", "people.person.nationality"}
    assert rels[0] == "music.artist.album"
    assert body["text"] == "<information>" + "\n".join(rels) + "</information>"
    assert body["calls"][0]["ok"] is True and body["calls"][0]["call"] == 'get_relations("Justin Bieber")'
    cut = client.post("/kg/query", json={"query": 'get_relations("Justin Bieber")', "dataset": "webqsp",
                                         "top_k": 2}).json()
    assert len(cut["calls"][0]["result"]) == 2


def test_get_triples_limits_per_relation_and_reports_no_triples(client: TestClient) -> None:
    resp = client.post("/kg/query", json={
        "dataset": "webqsp", "triples_per_relation": 2,
        "query": '<kg-query>get_triples("JUSTIN BIEBER", ["music.artist.album", "people.person.parents"])'
                 '</kg-query><kg-query>get_triples("Canada", ["music.artist.album"])</kg-query>'})
    body = resp.json()
    first = body["calls"][0]["result"]
    assert first == [["Justin Bieber", "music.artist.album", "Believe"],
                     ["Justin Bieber", "music.artist.album", "My World"],
                     ["Justin Bieber", "people.person.parents", "Jeremy Bieber"],
                     ["Justin Bieber", "people.person.parents", "Pattie Mallette"]]
    assert body["calls"][1] == {"call": 'get_triples("Canada", ["music.artist.album"])', "ok": True,
                                "result": []}
    assert body["text"].startswith("<information>[Justin Bieber, music.artist.album, Believe]\n")
    assert body["text"].endswith("\n\nNo triples found.</information>")


def test_malformed_and_unknown_entity_calls(client: TestClient) -> None:
    body = client.post("/kg/query", json={"query": "tell me about bieber", "dataset": "webqsp"}).json()
    assert body["text"] == f"<information>{INVALID}</information>"
    assert body["calls"] == [{"call": "tell me about bieber", "ok": False, "error": INVALID}]
    body = client.post("/kg/query", json={"query": 'get_relations("Nobody")', "dataset": "webqsp"}).json()
    assert body["calls"][0]["ok"] is False and "Nobody" in body["calls"][0]["error"]


def test_kg_query_bad_input(client: TestClient) -> None:
    resp = client.post("/kg/query", json={"query": "", "dataset": "webqsp"})
    assert resp.status_code == 422 and resp.json()["field"] == "query"
    resp = client.post("/kg/query", json={"query": " \n ", "dataset": "webqsp"})  # refused by its pattern
    assert resp.status_code == 422 and resp.json()["field"] == "query" and "blank" in resp.json()["message"]
    resp = client.post("/kg/query", json={"query": 'get_relations("x")', "top_k": 0, "dataset": "webqsp"})
    assert resp.status_code == 422 and resp.json()["field"] == "top_k"
    resp = client.post("/kg/query", json={"query": 'get_relations("x")'})  # 3 datasets loaded
    assert resp.status_code == 422 and resp.json()["field"] == "dataset"


def test_actions_lists_names_fields_and_datasets(client: TestClient) -> None:
    body = client.get("/actions").json()
    names = [a["name"] for a in body["actions"]]
    assert len(names) == 10 and "get_entities_out" in names and "get_conditional_relations" in names
    tail = next(a for a in body["actions"] if a["name"] == "get_tail_entities")
    assert tail["required"] == ["action_type", "dataset_name", "sample_id", "entity_id", "relation"]
    assert tail["result_key"] == "tail_entities"
    rel = next(a for a in body["actions"] if a["name"] == "get_relations")
    assert rel["optional"] == ["relation"]
    datasets = {d["name"]: d["samples"] for d in body["datasets"]}
    assert datasets == {"webqsp": 3, "pq2h": 1908, "pq3h": 300}  # WebQTrn-2 is loaded, empty
    assert body["max_batch"] == 10_000


def test_actions_and_kg_query_store_down_503(tmp_path, backend) -> None:  # type: ignore[no-untyped-def]
    with backend.stoppable(tmp_path) as (server, settings), app_client(settings) as c:
        assert c.get("/actions").json()["datasets"] == []
        # nothing loaded: schema-valid input, so not a 422; 404 names what is missing (issue 25, item 10)
        none = c.post("/kg/query", json={"query": 'get_relations("x")'})
        assert none.status_code == 404 and none.json()["field"] == "dataset", none.text
        message = none.json()["message"]
        assert "no KG dataset is loaded" in message and "neorag kg load" in message
        server.stop()
        assert c.get("/actions").status_code == 503
        resp = c.post("/kg/query", json={"query": 'get_relations("x")', "dataset": "d"})
        assert resp.status_code == 503 and resp.json()["error"] == "store_unavailable"
