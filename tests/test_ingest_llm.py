"""LLM relations/entities via a scripted OpenAI-compatible server: malformed JSON, mapping, relations-only."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from app.core.errors import BadInput
from ingest.checkpoint import checkpoint_path
from ingest.options import IngestOptions
from ingest.pipeline import ingest_path
from ingest.relations_only import ingest_relations_only
from tests.support.fake_openai import Reply, ScriptedOpenAI
from tests.support.ingest_graph import assert_invariants, make_services, q

FIX = Path(__file__).parent / "fixtures" / "ingest"


def _opts(**kw: Any) -> IngestOptions:
    return IngestOptions(chunk_size=300, chunk_overlap=60, **kw)


def by_prompt(pairs: list[Reply]) -> Reply:
    """Chunk-pair prompts (and their retries) get the scripted replies in order; other prompts none."""
    script = list(pairs)

    def reply(body: dict[str, Any]) -> Any:
        if str(body["messages"][0]["content"]).startswith("You label semantic relations") and script:
            return script.pop(0)
        return '{"relations": []}'

    return reply


def _sequential(settings):  # type: ignore[no-untyped-def]
    """One LLM request at a time, so a script's replies go to the requests in order."""
    return settings.model_copy(update={"llm_parallel": 1, "llm_cache_enabled": False})


def _rels(store) -> list[dict]:  # type: ignore[no-untyped-def]
    return q(store, "MATCH (a:Chunk)-[x:REL]->(b:Chunk) RETURN a.pos AS a, b.pos AS b, x.type AS type, "
                    "x.confidence AS conf ORDER BY a, b")


def test_llm_relations_malformed_retry_mapping_and_clamp(settings, store, embedder, tmp_path) -> None:  # type: ignore[no-untyped-def]
    src = tmp_path / "notes.txt"
    shutil.copy(FIX / "notes.txt", src)
    replies: list[Reply] = [
        "not json at all",                                                  # pair 1: malformed ...
        '{"relations": [{"type": "causes", "confidence": 1.4}]}',          # ... retried once: CAUSES, clamped
        "garbage", '{"relations": [',                                       # pair 2: malformed twice: skipped
        '{"relations": [{"type": "TELEPORTS", "confidence": 0.9}]}',        # pair 3: unknown type dropped
        '{"type": "supports", "confidence": 0.7, "direction": "B->A"}',     # pair 4: mapped, reversed
    ]
    with ScriptedOpenAI([], default=by_prompt(replies)) as llm:
        services = make_services(_sequential(settings), store, embedder, llm.base_url)
        events: list[dict] = []
        res = ingest_path(services, src, _opts(), events.append)
        n_requests = sum(1 for r in llm.requests
                         if str(r["messages"][0]["content"]).startswith("You label semantic relations"))
    assert res.llm_rel_edges == 2 and res.llm_rel_errors == 1
    start = next(e for e in events if e["stage"] == "relation_start")
    assert n_requests == start["pairs"] + 2  # two retries
    rels = _rels(store)
    assert sorted((r["type"], r["conf"]) for r in rels) == [("CAUSES", 1.0), ("SUPPORTS", 0.7)]
    cause = next(r for r in rels if r["type"] == "CAUSES")
    assert (cause["a"], cause["b"]) == (0, 1)  # the first pair, A->B
    sup = next(r for r in rels if r["type"] == "SUPPORTS")
    assert sup["a"] > sup["b"]  # B->A honoured
    assert any(e["stage"] == "relation_warn" and "malformed_json" in e["error"] for e in events)
    ck = json.loads(checkpoint_path((tmp_path / "notes.txt").resolve(), settings.checkpoint_dir(),
                                    tmp_path).read_text())
    assert sum(1 for v in ck["rel_pairs"].values() if "err" in v) == 1
    assert len(ck["rel_pairs"]) == start["pairs"]
    assert_invariants(store)


def test_llm_down_is_not_fatal(settings, store, embedder, tmp_path) -> None:  # type: ignore[no-untyped-def]
    src = tmp_path / "extra.jsonl"
    shutil.copy(FIX / "extra.jsonl", src)
    with ScriptedOpenAI([], default={"status": 500}) as llm:
        res = ingest_path(make_services(settings, store, embedder, llm.base_url), src, IngestOptions())
    assert res.chunks_new == 2 and res.llm_rel_errors == 1 and res.llm_rel_edges == 0


def test_relations_only_incremental(settings, store, embedder, tmp_path) -> None:  # type: ignore[no-untyped-def]
    src = tmp_path / "notes.txt"
    text = (FIX / "notes.txt").read_text()
    paragraphs = text.split("\n\n")
    src.write_text("\n\n".join(paragraphs[:3]))
    services = make_services(settings, store, embedder)
    ingest_path(services, src, _opts(llm_relations=False))
    old_ids = [r["id"] for r in services.store.run("ingest_source_chunks_ordered", {"source": str(src)})]
    src.write_text("\n\n".join(paragraphs))  # append two paragraphs
    ingest_path(services, src, _opts(incremental=True, llm_relations=False))
    ids = [r["id"] for r in services.store.run("ingest_source_chunks_ordered", {"source": str(src)})]
    assert ids[: len(old_ids) - 1] == old_ids[:-1]
    new = len(ids) - ids.index(old_ids[-2]) - 1 if old_ids[-1] not in ids else len(ids) - len(old_ids)
    with ScriptedOpenAI([], default='{"relations": [{"type": "FOLLOWS", "confidence": 0.6}]}') as llm:
        svc = make_services(settings, store, embedder, llm.base_url)
        events: list[dict] = []
        opts = IngestOptions(inc_rel_only=True, detect_after=True, new_count=new, rel_window=2)
        res = ingest_relations_only(svc, src, opts, events.append)
        assert res.new == new and res.old == len(ids) - new
        expected_pairs = sum(min(2, j) for j in range(len(ids) - new, len(ids)))
        assert res.pairs == expected_pairs and res.created == expected_pairs and res.skipped == 0
        stages = [e["stage"] for e in events]
        assert stages[0] == "relation_incremental_start" and stages[-1] == "relation_incremental_done"
        assert "relation_incremental_progress" in stages
        assert res.as_dict()["mode"] == "relations_incremental"
        again = ingest_relations_only(svc, src, IngestOptions(inc_rel_only=True, new_after=ids[-new - 1],
                                                              rel_window=2))
        assert again.created == 0 and again.skipped == expected_pairs
        with pytest.raises(BadInput) as err:
            ingest_relations_only(svc, src, IngestOptions(inc_rel_only=True, new_after="nope"))
        assert err.value.field == "new_after"
        with pytest.raises(BadInput) as err:
            too_many = IngestOptions(inc_rel_only=True, detect_after=True, new_count=999)
            ingest_relations_only(svc, src, too_many)
        assert err.value.field == "new_count"
    assert len(_rels(store)) == expected_pairs


def test_llm_entity_extraction_with_fallback(settings, store, embedder, tmp_path) -> None:  # type: ignore[no-untyped-def]
    src = tmp_path / "extra.jsonl"
    shutil.copy(FIX / "extra.jsonl", src)
    replies: list[Reply] = [
        '{"entities": ["Ada Lovelace", "Analytical Engine", "first computer programmer"]}',
        "nope", "still nope"]
    with ScriptedOpenAI(replies, default='{"relations": []}') as llm:
        services = make_services(_sequential(settings), store, embedder, llm.base_url)
        res = ingest_path(services, src, IngestOptions(entity_mode="llm", llm_relations=False))
    assert res.llm_entity_errors == 1
    ents = {r["id"] for r in q(store, "MATCH (e:Entity) RETURN e.id AS id")}
    assert "first computer programmer" in ents          # from the LLM
    assert "difference engine" in ents                  # heuristic fallback for the second chunk
    assert_invariants(store)
