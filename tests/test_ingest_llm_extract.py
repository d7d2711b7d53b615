"""LLM ingest edge cases against the scripted endpoint: custom entity and relation types, entity REL edges
with provenance (and their release when a chunk goes), invalid replies retried then skipped, the extraction
cache, a failing endpoint (breaker, fallback), and an endpoint without json_schema (json_object path)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from app.core.config import Settings
from ingest.options import IngestOptions
from ingest.pipeline import ingest_path
from tests.support.fake_openai import ScriptedOpenAI
from tests.support.ingest_graph import assert_invariants, make_services, q

FIX = Path(__file__).parent / "fixtures" / "ingest"
ADA, BABBAGE = "Ada Lovelace was", "Charles Babbage was"
ENTITIES = {
    ADA: [["Ada Lovelace", "PERSON"], ["Charles Babbage", "PERSON"], ["Analytical Engine", "MACHINE"]],
    BABBAGE: [["Charles Babbage", "PERSON"], ["Analytical Engine", "MACHINE"],
              ["Difference Engine", "MACHINE"]],
}


def rels(*triples: tuple[str, str, str]) -> dict[str, Any]:
    """A relation reply."""
    return {"relations": [{"source": s, "type": t, "target": o} for s, t, o in triples]}


def _settings(settings: Settings, tmp_path: Path, **extra: Any) -> Settings:
    values: dict[str, Any] = {"ingest_entity_mode": "llm", "ingest_llm_relations": "on", "llm_parallel": 2,
                              "ingest_entity_types": ["PERSON", "MACHINE"],
                              "ingest_relation_types": ["WORKED_WITH", "DESIGNED"],
                              "llm_cache_enabled": True, "llm_cache_path": tmp_path / "cache.sqlite3"}
    return settings.model_copy(update={**values, **extra})


def _chunk_of(body: dict[str, Any]) -> str:
    text = str(body["messages"][0]["content"])
    return ADA if ADA in text else BABBAGE


def model(relations: dict[str, list[Any]]) -> Any:
    """Entity replies by chunk; relation replies by chunk, each list consumed one reply per request."""
    script = {k: list(v) for k, v in relations.items()}

    def reply(body: dict[str, Any]) -> str:
        first = str(body["messages"][0]["content"])
        chunk = _chunk_of(body)
        if first.startswith("Extract the named entities"):
            return json.dumps({"entities": [{"name": n, "type": t} for n, t in ENTITIES[chunk]]})
        if first.startswith("List the relations"):
            replies = script[chunk]
            return json.dumps(replies.pop(0) if len(replies) > 1 else replies[0])
        return '{"relations": []}'  # chunk pairs

    return reply


def _entity_rels(store: Any) -> list[tuple[str, str, str, list[str]]]:
    rows = q(store, "MATCH (a:Entity)-[x:REL]->(b:Entity) RETURN a.id AS a, b.id AS b, x.type AS t, "
                    "x.chunks AS chunks, x.count AS n")
    assert all(r["n"] == len(r["chunks"]) for r in rows)
    return sorted((r["a"], r["t"], r["b"], r["chunks"]) for r in rows)


def test_custom_types_entity_rel_provenance_retry_and_release(settings: Settings, store: Any,
                                                              embedder: Any, tmp_path: Path) -> None:
    src = tmp_path / "extra.jsonl"
    shutil.copy(FIX / "extra.jsonl", src)
    relations = {
        ADA: [rels(("Ada Lovelace", "WORKED_WITH", "Charles Babbage"))],
        BABBAGE: [rels(("Charles Babbage", "INVENTED", "Difference Engine")),
                  rels(("Charles Babbage", "DESIGNED", "Analytical Engine"),
                       ("Charles Babbage", "DESIGNED", "Charles Babbage"))],
    }
    with ScriptedOpenAI([], default=model(relations)) as llm:
        services = make_services(_settings(settings, tmp_path), store, embedder, llm.base_url)
        events: list[dict[str, Any]] = []
        res = ingest_path(services, src, IngestOptions(), events.append)
        first_requests = len(llm.requests)
        chunks = {r["t"]: r["id"] for r in q(store, "MATCH (c:Chunk) RETURN c.title AS t, c.id AS id")}
        # a type outside the allow-list was refused (retry), the self-relation dropped
        assert _entity_rels(store) == [
            ("ada lovelace", "WORKED_WITH", "charles babbage", [chunks["Ada Lovelace"]]),
            ("charles babbage", "DESIGNED", "analytical engine", [chunks["Charles Babbage"]]),
        ]
        assert services.llm is not None
        stats = services.llm.structured_stats.as_dict()["json_schema"]
        assert stats["entity_relations"]["after_retry"] == 1 and stats["entities"]["first_try"] == 2
        types = {r["id"]: r["type"] for r in q(store, "MATCH (e:Entity) RETURN e.id AS id, e.type AS type")}
        assert types["analytical engine"] == "MACHINE" and types["ada lovelace"] == "PERSON"
        assert res.llm_entity_rel_edges == 2 and res.llm_entity_errors == 0 and res.llm_cache_hits == 0
        progress = [e for e in events if e["stage"] == "llm_extraction"]
        assert sorted(e["current"] for e in progress) == [1, 2] and all(e["total"] == 2 for e in progress)
        assert_invariants(store)

        # a refresh: every reply comes from the cache
        again = ingest_path(services, src, IngestOptions(refresh=True))
        assert len(llm.requests) == first_requests and again.llm_cache_hits >= 4
        assert len(_entity_rels(store)) == 2

        # the Babbage record goes: its chunk's relation loses its only support and is deleted
        src.write_text(src.read_text().splitlines()[0] + "\n")
        ingest_path(services, src, IngestOptions(incremental=True))
        kept = ("ada lovelace", "WORKED_WITH", "charles babbage", [chunks["Ada Lovelace"]])
        assert _entity_rels(store) == [kept]
        assert_invariants(store)


def test_relation_endpoint_outside_the_chunk_twice_is_skipped_and_counted(
        settings: Settings, store: Any, embedder: Any, tmp_path: Path) -> None:
    src = tmp_path / "extra.jsonl"
    shutil.copy(FIX / "extra.jsonl", src)
    bad = rels(("Ada Lovelace", "WORKED_WITH", "Alan Turing"))
    with ScriptedOpenAI([], default=model({ADA: [bad], BABBAGE: [{"relations": []}]})) as llm:
        services = make_services(_settings(settings, tmp_path, llm_cache_enabled=False), store, embedder,
                                 llm.base_url)
        res = ingest_path(services, src, IngestOptions())
    assert res.llm_entity_rel_errors == 1 and res.llm_entity_rel_edges == 0 and res.chunks_new == 2
    assert _entity_rels(store) == []
    assert services.llm is not None and services.llm.structured_stats.skipped() == 1


def test_failing_endpoint_opens_the_breaker_and_every_chunk_falls_back(settings: Settings, store: Any,
                                                                       embedder: Any, tmp_path: Path) -> None:
    src = tmp_path / "notes.txt"
    shutil.copy(FIX / "notes.txt", src)
    with ScriptedOpenAI([], default={"status": 500}) as llm:
        cfg = _settings(settings, tmp_path, llm_parallel=1, ingest_llm_relations="off")
        services = make_services(cfg, store, embedder, llm.base_url)
        events: list[dict[str, Any]] = []
        res = ingest_path(services, src, IngestOptions(chunk_size=300, chunk_overlap=0, checkpoint=False),
                          events.append)
    assert res.chunks_new == res.chunks_total > 3 and res.llm_entity_errors == res.chunks_total
    assert len(llm.requests) == 3  # then the breaker holds further calls (the pause outlasts this ingest)
    warns = [e for e in events if e["stage"] == "llm_warn"]
    assert len(warns) == 1 and "heuristic" in warns[0]["detail"]
    assert q(store, "MATCH (c:Chunk) WHERE NOT (c)-[:MENTIONS]->() RETURN c.id AS id") == []
    assert_invariants(store)
    assert not (tmp_path / "cache.sqlite3").exists() or _cache_rows(tmp_path / "cache.sqlite3") == 0


def _cache_rows(path: Path) -> int:
    import sqlite3

    with sqlite3.connect(path) as db:
        return int(db.execute("SELECT count(*) FROM extraction").fetchone()[0])


def test_endpoint_without_json_schema_uses_json_object(settings: Settings, store: Any, embedder: Any,
                                                       tmp_path: Path) -> None:
    src = tmp_path / "extra.jsonl"
    shutil.copy(FIX / "extra.jsonl", src)
    relations = {ADA: [{"relations": []}], BABBAGE: [{"relations": []}]}
    with ScriptedOpenAI([], default=model(relations), response_formats=("json_object",)) as llm:
        services = make_services(_settings(settings, tmp_path), store, embedder, llm.base_url)
        ingest_path(services, src, IngestOptions(llm_relations=False))
    assert {r["response_format"]["type"] for r in llm.requests} == {"json_object"}
    assert "JSON Schema" in llm.requests[0]["messages"][-1]["content"]
    names = {r["id"] for r in q(store, "MATCH (e:Entity) RETURN e.id AS id")}
    assert {"ada lovelace", "difference engine"} <= names
