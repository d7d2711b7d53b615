"""POST /retrieve with a JSON list body (KG-R1 actions) on real PathQuestion data and the seed's examples."""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.kg.actions import ACTIONS
from ingest.kg.loader import load_records
from ingest.kg.pathquestion import parse_answers, parse_path
from ingest.kg.records import KGRecord
from tests.support.apps import app_client
from tests.support.backends import Backend
from tests.support.kg import PQ, kg_settings, loaded_store, shared_kg


@pytest.fixture(scope="module")
def client(request: pytest.FixtureRequest, backend: Backend) -> Iterator[TestClient]:
    settings = kg_settings(backend)
    with shared_kg(request, backend, settings), app_client(settings) as c:
        yield c


def post(client: TestClient, items: list[dict[str, Any]], **params: str) -> list[dict[str, Any]]:
    resp = client.post("/retrieve", json=items, params=params)
    assert resp.status_code == 200, resp.text
    body = resp.json()
    assert isinstance(body, list) and len(body) == len(items)
    return body


def act(action: str, entity: str, sample: str, dataset: str, relation: str | None = None) -> dict[str, Any]:
    item = {"action_type": action, "dataset_name": dataset, "sample_id": sample, "entity_id": entity}
    if relation is not None:
        item["relation"] = relation
    return item


def questions(name: str) -> list[tuple[str, list[tuple[str, str, str]], list[str]]]:
    out = []
    for i, line in enumerate((PQ / name).read_text(encoding="utf-8").splitlines()):
        q, ans, gold = line.split("\t")
        out.append((f"{Path(name).stem}-{i}", parse_path(gold), parse_answers(ans)))
    return out


@pytest.mark.parametrize(("file", "dataset"), [("PQ-2H.txt", "pq2h"), ("PQ-3H.txt", "pq3h")])
def test_gold_paths_reach_the_answer_forward_and_back(client: TestClient, file: str, dataset: str) -> None:
    qs = questions(file)
    assert len(qs) >= 300
    hops = len(qs[0][1])
    for step in range(hops):
        rels = post(client, [act("get_relations", p[step][0], sid, dataset) for sid, p, _ in qs])
        tails_rel = post(client, [act("get_tail_relations", p[step][0], sid, dataset) for sid, p, _ in qs])
        tails = post(client, [act("get_tail_entities", p[step][0], sid, dataset, p[step][1])
                              for sid, p, _ in qs])
        heads = post(client, [act("get_head_entities", p[step][2], sid, dataset, p[step][1])
                              for sid, p, _ in qs])
        for (sid, path, answers), r, tr, t, h in zip(qs, rels, tails_rel, tails, heads, strict=True):
            head, relation, tail = path[step]
            assert relation in r["results"][0]["relations"], (sid, step)
            assert relation in tr["results"][0]["relations"], (sid, step)
            assert tail in t["results"][0]["tail_entities"], (sid, step)
            assert head in h["results"][0]["head_entities"], (sid, step)
            if step == hops - 1:
                assert tail in answers
                assert set(t["results"][0]["tail_entities"]) & set(answers)


def test_seed_example_byte_for_byte_in_structure(client: TestClient) -> None:
    payloads = [
        {"action_type": "get_relations", "dataset_name": "webqsp", "sample_id": "WebQTrn-0",
         "entity_id": "Justin Bieber"},
        {"action_type": "get_tail_entities", "dataset_name": "webqsp", "sample_id": "WebQTrn-0",
         "entity_id": "Justin Bieber", "relation": "music.artist.album"},
        {"action_type": "get_relations", "dataset_name": "webqsp", "sample_id": "WebQTrn-0"},
    ]
    resp = client.post("/retrieve", json=payloads)
    assert resp.status_code == 200 and resp.headers["content-type"] == "application/json"
    body = resp.json()
    for item in body:
        assert isinstance(item.pop("query_time"), float)
    assert body == [
        {"results": [{"relations": ["music.artist.album", "people.person.parents",
                                    "people.person.sibling_s"]}],
         "total_results": 3},
        {"results": [{"tail_entities": ["Believe", "My World", "My World 2.0"]}], "total_results": 3},
        {"error": "For GET_RELATIONS, sample_id, dataset_name, and entity_id are required in request: "
                  "{'action_type': 'get_relations', 'dataset_name': 'webqsp', 'sample_id': 'WebQTrn-0', "
                  "'entity_id': None, 'relation': None}",
         "total_results": 0},
    ]
    assert list(json.loads(resp.text)[0]) == ["results", "query_time", "total_results"]
    assert list(json.loads(resp.text)[2]) == ["error", "query_time", "total_results"]


def test_all_ten_actions_and_aliases(client: TestClient) -> None:
    s, d = "WebQTrn-0", "webqsp"
    items = [
        act("get_relations", "Jeremy Bieber", s, d),
        act("get_head_relations", "Jeremy Bieber", s, d),
        act("get_relations_in", "Jeremy Bieber", s, d),
        act("get_tail_relations", "Jeremy Bieber", s, d),
        act("get_relations_out", "Jeremy Bieber", s, d),
        act("get_head_entities", "Jeremy Bieber", s, d, "people.person.parents"),
        act("get_entities_in", "Jeremy Bieber", s, d, "people.person.parents"),
        act("get_tail_entities", "Jeremy Bieber", s, d, "people.person.gender"),
        act("get_entities_out", "Jeremy Bieber", s, d, "people.person.gender"),
        {**act("get_conditional_relations", "Justin Bieber", s, d), "concept": "PEOPLE"},
    ]
    assert len({i["action_type"] for i in items}) == len(ACTIONS) == 10
    got = [next(iter(r["results"][0].items())) for r in post(client, items)]
    assert got == [
        ("relations", ["people.person.gender", "people.person.parents"]),
        ("relations", ["people.person.parents"]),
        ("relations", ["people.person.parents"]),
        ("relations", ["people.person.gender"]),
        ("relations", ["people.person.gender"]),
        ("head_entities", ["Jaxon Bieber", "Justin Bieber"]),
        ("head_entities", ["Jaxon Bieber", "Justin Bieber"]),
        ("tail_entities", ["Male"]),
        ("tail_entities", ["Male"]),
        ("relations", ["people.person.parents", "people.person.sibling_s"]),
    ]


def test_entity_match_exact_then_case_insensitive_trimmed(client: TestClient) -> None:
    s, d = "WebQTrn-0", "webqsp"
    out = post(client, [
        act("get_relations", "justin bieber", s, d),      # exact: the lower-case entity of this sample
        act("get_relations", "  JUSTIN BIEBER ", s, d),   # folded: two candidates, smallest name wins
        act("get_relations", "jaxon bieber", s, d),       # folded: one candidate
        act("get_relations", "Nobody", s, d),             # unknown entity: empty list
        act("get_tail_entities", "Justin Bieber", s, d, "no.such.relation"),
    ])
    assert out[0]["results"] == [{"relations": ["common.topic.notable_types"]}]
    assert out[1]["results"][0]["relations"] == ["music.artist.album", "people.person.parents",
                                                  "people.person.sibling_s"]
    assert out[2]["results"] == [
        {"relations": ["people.person.parents", "people.sibling_relationship.sibling"]}]
    assert out[3] | {"query_time": 0} == {"results": [{"relations": []}], "query_time": 0, "total_results": 0}
    assert out[4]["results"] == [{"tail_entities": []}] and out[4]["total_results"] == 0


def test_samples_are_isolated_and_duplicates_collapse(client: TestClient) -> None:
    out = post(client, [
        act("get_relations", "Justin Bieber", "WebQTrn-1", "webqsp"),
        act("get_tail_entities", "Justin Bieber", "WebQTrn-1", "webqsp", "music.artist.album"),
        act("get_tail_entities", "Canada", "WebQTrn-0", "webqsp", "location.country.capital"),
        act("get_tail_entities", "Justin Bieber", "WebQTrn-0", "webqsp", "music.artist.album"),
    ])
    assert out[0]["results"][0]["relations"] == ["music.artist.label", "people.person.nationality"]
    assert out[1]["results"][0]["tail_entities"] == []
    assert out[2]["results"][0]["tail_entities"] == []
    assert out[3]["results"][0]["tail_entities"].count("Believe") == 1


def test_unknown_or_empty_sample_is_an_error_item(client: TestClient) -> None:
    out = post(client, [
        act("get_relations", "Justin Bieber", "WebQTrn-999", "webqsp"),
        act("get_relations", "Justin Bieber", "WebQTrn-0", "nosuchdataset"),
        act("get_relations", "Justin Bieber", "WebQTrn-2", "webqsp"),
        act("get_relations", "Justin Bieber", "WebQTrn-0", "webqsp"),
    ])
    for item, sid in zip(out[:3], ["WebQTrn-999", "WebQTrn-0", "WebQTrn-2"], strict=True):
        assert item["results"] == [{"error": f"Subgraph for {sid} could not be loaded or is empty."}]
        assert item["total_results"] == 0 and isinstance(item["query_time"], float)
    assert out[3]["total_results"] == 3


def test_invalid_items_get_seed_messages_and_the_rest_runs(client: TestClient) -> None:
    base = {"dataset_name": "webqsp", "sample_id": "WebQTrn-0"}
    items: list[dict[str, Any]] = [
        {**base, "action_type": "get_head_entities", "entity_id": "Jeremy Bieber"},
        {**base, "action_type": "get_conditional_relations", "entity_id": "Justin Bieber"},
        {**base, "action_type": "fly_to_moon", "entity_id": "Justin Bieber"},
        {"dataset_name": "webqsp", "entity_id": "Justin Bieber", "action_type": "get_relations"},
        {**base, "entity_id": "Justin Bieber"},
        {**base, "action_type": "get_relations", "entity_id": "Justin Bieber", "_debug_batch_idx": 7,
         "relation": "ignored.for.relation.actions"},
    ]
    out = post(client, items)
    assert out[0]["error"] == (
        "For GET_HEAD_ENTITIES, sample_id, dataset_name, entity_id, and relation are required in request: "
        "{'action_type': 'get_head_entities', 'dataset_name': 'webqsp', 'sample_id': 'WebQTrn-0', "
        "'entity_id': 'Jeremy Bieber', 'relation': None}")
    assert out[1]["error"].startswith(
        "For GET_CONDITIONAL_RELATIONS, sample_id, dataset_name, entity_id, and concept are required "
        "in request: {")
    assert "'concept': None}" in out[1]["error"]
    assert out[2]["error"].startswith("Unsupported action_type 'fly_to_moon'; supported: get_relations,")
    assert out[3]["error"].startswith(
        "For GET_RELATIONS, sample_id, dataset_name, and entity_id are required")
    assert "'sample_id': None" in out[3]["error"]
    assert out[4]["error"].startswith("action_type is required in request: {'action_type': None")
    for item in out[:5]:
        assert item["total_results"] == 0 and set(item) == {"error", "query_time", "total_results"}
    assert out[5]["total_results"] == 3


def test_chat_format_is_kg_r1_s_own_answer(client: TestClient) -> None:
    s, d = "WebQTrn-0", "webqsp"
    items = [
        act("get_relations", "Justin Bieber", s, d),
        act("get_relations", "Justin Bieber", "missing", d),
        act("get_relations", "Nobody", s, d),
        act("get_tail_entities", "Justin Bieber", s, d, "no.such.relation"),
        act("get_tail_entities", "Justin Bieber", s, d, "people.person.gender"),
        {"action_type": "get_relations", "dataset_name": d},
        act("get_tail_entities", "Justin Bieber", s, d, "music.artist.album"),
    ]
    out = post(client, items, format="chat")
    assert [(o["kg_metadata"]["error_type"], o["choices"][0]["message"]["content"]) for o in out] == [
        ("KG_SUCCESS", 'Relations for entity "Justin Bieber" [DEPRECATED: Use get_head_relations() or '
                       'get_tail_relations()]:\ncommon.topic.notable_types, music.artist.album, '
                       'people.person.parents, people.person.sibling_s'),  # with "justin bieber"'s relation
        ("KG_SAMPLE_NOT_FOUND", 'Sample "missing" not found in KG'),
        ("KG_ENTITY_NOT_FOUND", 'Entity "Nobody" not found in KG'),
        ("KG_RELATION_NOT_FOUND", 'Relation "no.such.relation" not found in KG'),  # in no sample of webqsp
        ("KG_NO_RESULTS", 'No entities found outgoing via relation "people.person.gender" from '
                          '"Justin Bieber" in knowledge graph'),  # a relation of the dataset
        ("KG_FORMAT_ERROR", "Missing required fields for get_relations: sample_id, entity_id."),
        ("KG_SUCCESS", 'Entities outgoing via relation "music.artist.album" from "Justin Bieber": Believe, '
                       'My World, My World 2.0'),
    ]
    assert [o["success"] for o in out] == [True, False, False, False, False, False, True]
    assert [o["action"] for o in out] == ["get_relations"] * 3 + ["get_entities_out"] * 2 + [
        "get_relations", "get_entities_out"]
    assert out[1]["choices"][0]["finish_reason"] == "error" and out[0]["object"] == "kg_retrieval"
    assert "query_time" in out[0] and "query_time" not in out[5]


@pytest.mark.parametrize(("body", "fragment"), [
    (b"{not json", "not valid JSON"),
    (b"42", "got int"),
    (b'"get_relations"', "got str"),
    (b'[{"action_type": "get_relations"}, 3]', "body[1]"),
    (b"[[1, 2]]", "body[0]"),
])
def test_bad_bodies_are_422(client: TestClient, body: bytes, fragment: str) -> None:
    resp = client.post("/retrieve", content=body, headers={"content-type": "application/json"})
    assert resp.status_code == 422
    assert resp.json()["error"] == "invalid_request" and fragment in resp.json()["message"]


def test_bad_format_parameter_is_422(client: TestClient) -> None:
    resp = client.post("/retrieve", json=[], params={"format": "xml"})
    assert resp.status_code == 422 and resp.json()["field"] == "format"


def test_empty_list_answers_empty_list(client: TestClient) -> None:
    assert post(client, []) == []


def test_batch_uses_a_bounded_number_of_round_trips(client: TestClient) -> None:
    store = client.app.state.services.store  # type: ignore[attr-defined]
    qs = questions("PQ-3H.txt")[:256]
    items = [act("get_tail_entities", p[0][0], sid, "pq3h", p[0][1]) for sid, p, _ in qs]
    items += [act("get_relations", p[1][0].upper(), sid, "pq3h") for sid, p, _ in qs]  # folded matches
    before = store.round_trips
    post(client, items)
    assert store.round_trips - before <= 2  # generations; samples with the batch's fact buckets
    before = store.round_trips
    post(client, items)  # warm: at most the generation check (none while it is fresh)
    assert store.round_trips - before <= 1
    more = [act("get_relations", p[2][0], sid, "pq3h") for sid, p, _ in qs[:64]]  # new names, known samples
    before = store.round_trips
    answers = post(client, more)
    assert store.round_trips - before <= 2  # generations; the new names' buckets only (kg_facts_by_key)
    assert sum(a["total_results"] > 0 for a in answers) == len(more)


def test_concurrent_cold_batches_combine_their_reads_and_answer_right(client: TestClient) -> None:
    """Many one-action batches at once on a cold cache (a fresh app on the same graph): every sample read
    goes through app.kg.combine, reads that overlap share a statement, and each batch gets its own answer."""
    qs = questions("PQ-2H.txt")[:24]
    settings = client.app.state.services.settings  # type: ignore[attr-defined]
    with app_client(settings) as fresh:
        answers: dict[str, Any] = {}

        def ask(sid: str, path: list[tuple[str, str, str]]) -> None:
            head, relation, _ = path[0]
            item = act("get_tail_entities", head, sid, "pq2h", relation)
            answers[sid] = fresh.post("/retrieve", json=[item])

        workers = [threading.Thread(target=ask, args=(sid, path)) for sid, path, _ in qs]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join(60)
        for sid, path, _ in qs:
            assert answers[sid].status_code == 200, answers[sid].text
            assert path[0][2] in answers[sid].json()[0]["results"][0]["tail_entities"], sid
        stats = fresh.get("/diagnostics").json()["kg_reads"]["kg_sample_lookup_with_facts"]
        assert stats["reads"] == len(qs) and 1 <= stats["round_trips"] <= len(qs)


def test_batch_over_the_limit_is_422(backend: Backend) -> None:
    """The schema says maxItems = NEORAG_KG_MAX_BATCH: a longer list violates it, and a schema violation is
    a 422 like every other (it was a 413; issue 25, item 10)."""
    settings = kg_settings(backend, kg_max_batch=3)
    backend.claim(settings.graph_name)
    with app_client(settings) as c:
        resp = c.post("/retrieve", json=[act("get_relations", "x", "s", "d")] * 4)
        assert resp.status_code == 422
        assert resp.json()["error"] == "batch_too_large" and "limit of 3" in resp.json()["message"]
        assert c.post("/retrieve", json=[act("get_relations", "x", "s", "d")] * 3).status_code == 200


def test_reload_and_replace_are_seen_without_restart(backend: Backend) -> None:
    settings = kg_settings(backend, kg_generation_check_ms=0)  # tokens read before every batch
    with loaded_store(backend, settings, pq=False) as store, app_client(settings) as c:
        probe = [act("get_tail_entities", "A", "s1", "iso", "r")]
        assert post(c, probe)[0]["results"][0].get("error")
        load_records(store, "iso", [KGRecord("s1", [("A", "r", "B"), ("A", "r", "B")])])
        assert post(c, probe)[0]["results"] == [{"tail_entities": ["B"]}]
        load_records(store, "iso", [KGRecord("s1", [("A", "r", "C")])])  # no --replace: unchanged
        assert post(c, probe)[0]["results"] == [{"tail_entities": ["B"]}]
        load_records(store, "iso", [KGRecord("s1", [("A", "r", "C")])], replace=True)
        assert post(c, probe)[0]["results"] == [{"tail_entities": ["C"]}]


def test_store_down_is_503_for_the_whole_request(tmp_path: Path, backend: Backend) -> None:
    fresh = kg_settings(backend, kg_generation_check_ms=0)  # every batch reads the generations: no
    # answer from the cache of a store that went down a moment ago (a proxy stops at once)
    with backend.stoppable(tmp_path, fresh) as (server, settings), app_client(settings) as c:
        first = c.post("/retrieve", json=[act("get_relations", "x", "s", "d")])
        assert first.status_code == 200, first.text  # failed once in a full run (503): say why next time
        server.stop()
        resp = c.post("/retrieve", json=[act("get_relations", "x", "s", "d")])
        assert resp.status_code == 503
        assert resp.json()["error"] == "store_unavailable"


def test_object_body_goes_to_passage_retrieval(client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    resp = client.post("/retrieve", json={"top_k": 3})
    assert resp.status_code == 422 and resp.json()["field"] == "query"
    monkeypatch.setitem(sys.modules, "app.retrieval.passages", None)  # as if not installed
    resp = client.post("/retrieve", json={"query": "who is justin bieber"})
    assert resp.status_code == 503
    assert resp.json() == {"error": "not_available", "message": "passage retrieval is not installed"}
