"""KG-R1 chat answers beyond the golden replay: settings, GET /actions, round trips, outages, fast path."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest

from app.commands.common import load_settings
from app.core.config import Settings
from app.core.errors import ConfigError
from app.kg.cache import KGCache
from app.kg.chat import run_chat
from app.kg.facts import FactsExtra, decode_facts, encode_facts, outgoing, resolve_facts, resolve_union
from app.kg.keys import facts_bucket, facts_key
from app.kg.service import OFFLINE, NeedsStore, run_actions
from app.store.base import GraphStore
from ingest.kg.loader import load_path
from tests.support.apps import app_client, stoppable_store
from tests.support.kg import ROG

GOLDEN = Path(__file__).parent / "fixtures" / "kg_r1_golden"


def act(action: str, entity: str, relation: str | None = None, sample: str = "WebQTrn-0") -> dict[str, Any]:
    item = {"action_type": action, "dataset_name": "webqsp", "sample_id": sample, "entity_id": entity}
    return item if relation is None else {**item, "relation": relation}


def content(answer: dict[str, Any]) -> str:
    return str(answer["choices"][0]["message"]["content"])


def test_default_format_setting_actions_and_relation_format(settings: Settings, store: GraphStore) -> None:
    load_path(store, ROG, "webqsp")
    chat = settings.model_copy(update={"kg_default_format": "chat", "kg_relation_format": "compact",
                                       "kg_chat_actions": ["get_relations_out", "get_entities_out"]})
    with app_client(chat) as client:
        out = client.post("/retrieve", json=[act("get_relations_out", "Justin Bieber"),
                                             act("get_relations", "Justin Bieber")]).json()
        assert content(out[0]) == ('Outgoing relations for entity "Justin Bieber":\n'
                                   "common.topic: notable_types\nmusic.artist: album\n"
                                   "people.person: parents, sibling_s")
        assert (out[1]["action"], out[1]["kg_metadata"]["error_type"], content(out[1])) == (
            "server_error", "KG_SERVER_ERROR",
            'Action "get_relations" not available (use: get_relations_out, get_entities_out)')
        seed = client.post("/retrieve?format=seed", json=[act("get_relations", "Justin Bieber")]).json()
        assert list(seed[0]) == ["results", "query_time", "total_results"]  # NeoRAG's own answer, unchanged
        listing = client.get("/actions").json()
        assert listing["actions"] == ["get_relations_out", "get_entities_out"]
        assert listing["supported_kgs"] == ["webqsp"]
        assert set(listing["action_details"]) == set(listing["actions"])
        assert "formats" in client.get("/actions?format=seed").json()
        assert client.get("/actions?format=xml").status_code == 422


def test_chat_actions_setting_accepts_commas_json_and_legacy_names(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NEORAG_KG_CHAT_ACTIONS", "get_tail_relations, get_head_entities,get_relations_out")
    assert load_settings().kg_chat_actions == ["get_relations_out", "get_entities_in"]
    monkeypatch.setenv("NEORAG_KG_CHAT_ACTIONS", json.dumps(["get_relations"]))
    assert load_settings().kg_chat_actions == ["get_relations"]
    monkeypatch.setenv("NEORAG_KG_CHAT_ACTIONS", "get_everything")
    with pytest.raises(ConfigError, match="NEORAG_KG_CHAT_ACTIONS"):
        load_settings()


def test_round_trips_cold_warm_and_the_generation_check(settings: Settings, store: GraphStore) -> None:
    load_path(store, GOLDEN / "data_kg", "webqsp")
    items = [act("get_entities_out", "Paris", "location.location.containedby", "WebQTrn-1"),
             act("get_relations_in", "JUSTIN BIEBER"), act("get_relations", "Nobody")]
    cache = KGCache(1_000_000, check_ms=60_000)
    before = store.round_trips
    first = run_chat(store, cache, items)
    assert store.round_trips - before == 3  # generations, samples with their buckets, relation vocabulary
    assert content(first[0]).endswith(": France, Texas")
    assert [content(a) for a in run_chat(OFFLINE, cache, items)] == [content(a) for a in first]  # no store
    load_path(store, GOLDEN / "data_kg", "webqsp", replace=True)  # a new generation token
    before = store.round_trips
    run_chat(store, cache, items)
    assert store.round_trips == before  # still fresh: the load is not seen yet ...
    cache.checked.clear()  # ... until the check interval has passed
    with pytest.raises(NeedsStore):
        run_chat(OFFLINE, cache, items)
    run_chat(store, cache, items)
    assert cache.invalidations == 1
    every = KGCache(1_000_000, check_ms=0)
    run_actions(store, every, items)
    before = store.round_trips
    run_actions(store, every, items)
    assert store.round_trips - before == 1  # NEORAG_KG_GENERATION_CHECK_MS=0: the check on every batch


def test_a_busy_cache_lock_sends_the_batch_to_a_thread(store: GraphStore) -> None:
    cache = KGCache(1_000, check_ms=60_000)
    with cache.lock:
        done: list[BaseException] = []
        thread = threading.Thread(target=lambda: done.append(_raises(cache)))
        thread.start()
        thread.join()
    assert isinstance(done[0], NeedsStore)
    assert run_actions(store, cache, [act("get_relations", "x")])[0]["results"][0]["error"]


class _GatedStore:
    """The real store, except that the cold-sample read waits for ``open`` (a slow store, on demand)."""

    def __init__(self, store: GraphStore) -> None:
        self.store, self.entered, self.open = store, threading.Event(), threading.Event()

    def run(self, name: str, params: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        if name == "kg_sample_lookup_with_facts":
            self.entered.set()
            assert self.open.wait(30)
        return self.store.run(name, params)


def _cold_batch_waiting(store: GraphStore, cache: KGCache, items: list[dict[str, Any]],
                        chat: bool = False) -> tuple[_GatedStore, threading.Thread, list[Any]]:
    gated, answers = _GatedStore(store), []
    run = run_chat if chat else run_actions
    thread = threading.Thread(target=lambda: answers.append(run(gated, cache, items)))  # type: ignore[arg-type]
    thread.start()
    assert gated.entered.wait(30)
    return gated, thread, answers


@pytest.mark.parametrize("chat", [False, True], ids=["seed", "chat"])
def test_a_cold_batch_waits_for_the_store_without_the_cache_lock(store: GraphStore, chat: bool) -> None:
    """While one batch waits for the store, batches the cache can answer are answered (the lock is held
    only to read and fill the cache, never across a round trip); what it fetched is cached afterwards."""
    load_path(store, GOLDEN / "data_kg", "webqsp")
    cache = KGCache(1_000_000, check_ms=60_000)
    warm = [act("get_relations", "JUSTIN BIEBER")]
    cold = [act("get_entities_out", "Paris", "location.location.containedby", "WebQTrn-1")]
    run = run_chat if chat else run_actions
    expected = run(store, KGCache(0), cold)
    first = run(store, cache, warm)
    gated, thread, answers = _cold_batch_waiting(store, cache, cold, chat)
    try:
        assert strip(run(OFFLINE, cache, warm)) == strip(first)  # no NeedsStore("cache lock busy")
    finally:
        gated.open.set()
        thread.join(30)
    assert strip(answers[0]) == strip(expected)
    assert strip(run(OFFLINE, cache, cold)) == strip(expected)  # cached by the batch that fetched it


def test_what_a_batch_fetched_across_a_load_is_not_cached(store: GraphStore) -> None:
    """A load (new generation token) seen while a batch waited for the store: its answers stand for that
    batch, but they may predate the load, so they are not added to the cache."""
    load_path(store, GOLDEN / "data_kg", "webqsp")
    cache = KGCache(1_000_000, check_ms=0)
    cold = [act("get_entities_out", "Paris", "location.location.containedby", "WebQTrn-1")]
    gated, thread, answers = _cold_batch_waiting(store, cache, cold)
    try:
        load_path(store, GOLDEN / "data_kg", "webqsp", replace=True)  # a new generation token
        run_actions(store, cache, [act("get_relations", "Nobody")])  # another batch sees it
    finally:
        gated.open.set()
        thread.join(30)
    assert answers[0][0]["total_results"] > 0
    with pytest.raises(NeedsStore):  # check_ms=0: the generation read comes first; then the miss
        run_actions(OFFLINE, cache, cold)
    assert ("webqsp/WebQTrn-1", "Paris") not in cache.facts


def strip(answers: list[Any]) -> list[Any]:
    """What an answer says: a chat answer's text, a seed answer without its timing."""
    return [content(a) if "choices" in a else {k: v for k, v in a.items() if k != "query_time"}
            for a in answers]


def _raises(cache: KGCache) -> BaseException:
    try:
        run_actions(OFFLINE, cache, [act("get_relations", "x")])
    except NeedsStore as exc:
        return exc
    raise AssertionError("expected NeedsStore")


def test_union_decodes_only_the_lines_it_needs(monkeypatch: pytest.MonkeyPatch) -> None:
    triples = [(f"Entity {i}", "r.s.t", f"Entity {i + 1}") for i in range(120)]
    triples += [("Paris", "r.s.t", "France"), ("paris", "r.s.t", "Texas"), ("PARIS ", "r.s.u", "X")]
    buckets, rows = encode_facts("d/s", sorted(triples))
    texts = {r["key"]: r["facts"] for r in rows}

    def bucket(name: str) -> str:  # the bucket text a reader fetches for ``name``
        return texts[facts_key("d/s", facts_bucket(name, buckets))]

    decoded: list[str] = []
    real = json.loads
    monkeypatch.setattr("app.kg.facts.json.loads", lambda s: decoded.append(s) or real(s))
    alone = resolve_union(bucket("Entity 7"), "Entity 7")
    assert alone is not None and alone.relations("both") == ["r.s.t"] and len(decoded) == 1
    decoded.clear()
    text = bucket("Paris")  # the exact and the case-insensitive forms share a bucket
    union = resolve_union(text, "Paris")  # exact match: its line, then its two variants' lines
    assert union is not None and union.entities("out", "r.s.t") == ["France", "Texas"]
    assert union.relations("out") == ["r.s.t", "r.s.u"] and len(decoded) == 3
    decoded.clear()
    lines = text.count("\n") + 1
    assert lines > 3  # the bucket holds other entities too
    assert resolve_union(text, "pArIs") is not None and len(decoded) == lines  # no exact match: every line


def test_line_objects_isolated_hidden_and_repeated_names() -> None:
    triples = [("A", "r.s.t", "B"), ("a", "r.s.t", "B"), ("C", "r.s.t", "B")]
    extra = FactsExtra(isolated=["Lonely"], hidden={"C"}, repeats_out={("a", "r.s.t", "B"): 2})
    _, rows = encode_facts("d/s", triples, extra)
    text = rows[0]["facts"]
    assert set(decode_facts(text)) == {"A", "a", "B", "C", "Lonely"}  # the object is not an entity's list
    assert sorted(outgoing(text)) == sorted(triples)
    assert decode_facts(text)["Lonely"] == [[], [], [], []]
    union = resolve_union(text, "a")
    assert union is not None and union.entity_list("out", "r.s.t") == ["B", "B"]  # two entries named B
    assert union.entities("out", "r.s.t") == ["B"]  # NeoRAG's own answers stay de-duplicated
    assert resolve_union(text, "C") is None  # not in the sample's entity list
    assert resolve_facts(text, "C") is not None  # NeoRAG's own matching still finds it
    lonely = resolve_union(text, "lonely")
    assert lonely is not None and lonely.relations("both") == []


def test_store_down_is_503_for_chat_answers_and_the_listing(tmp_path: Path) -> None:
    with stoppable_store(tmp_path) as (server, settings), app_client(settings) as client:
        assert client.post("/retrieve?format=chat", json=[act("get_relations_out", "x")]).status_code == 200
        server.stop()
        resp = client.post("/retrieve?format=chat", json=[act("get_relations_out", "x", sample="other")])
        assert resp.status_code == 503 and resp.json()["error"] == "store_unavailable"
        resp = client.get("/actions?format=chat")
        assert resp.status_code == 503 and resp.json()["error"] == "store_unavailable"


def test_chat_bad_input_is_a_clear_4xx(settings: Settings) -> None:
    with app_client(settings) as client:
        resp = client.post("/retrieve?format=chat", content=b'[{"action_type": 1}, 2]',
                           headers={"content-type": "application/json"})
        assert resp.status_code == 422 and resp.json()["field"] == "body[1]"
        resp = client.post("/retrieve?format=chat", json=[{"action_type": "get_relations_out",
                                                           "dataset_name": "webqsp", "entity_id": 3}])
        assert resp.status_code == 200  # an item KG-R1's model refuses: only that item fails
        assert content(resp.json()[0]) == "Input should be a valid string"
