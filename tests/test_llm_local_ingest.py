"""`llm` tier, ingest: LLM-mode extraction with the bundled 135M model through NEORAG_LLM_BASE_URL=local.

Contracts, not wisdom: every REL type is in its allow-list, endpoints exist, provenance names the chunk, a
re-ingest calls no model (cache), and killing the model server mid-ingest loses no chunk.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from app.core.config import Settings
from app.services.container import build_services
from ingest.llm_relations import REL_TYPES
from ingest.options import IngestOptions
from ingest.pipeline import ingest_path
from tests.support.ingest_graph import assert_invariants, q
from tests.support.local_llm import LocalModel

pytestmark = pytest.mark.llm
FIX = Path(__file__).parent / "fixtures"


def _llm_settings(local_llm: LocalModel, settings: Settings, tmp_path: Path, **extra: Any) -> Settings:
    values: dict[str, Any] = {"ingest_entity_mode": "llm", "ingest_llm_relations": "on", "relation_window": 1,
                              "llm_cache_enabled": True, "llm_cache_path": tmp_path / "llm_cache.sqlite3"}
    return local_llm.settings(settings, **{**values, **extra})


def _opts(**kw: Any) -> IngestOptions:
    return IngestOptions(chunk_size=160, chunk_overlap=0, checkpoint=False, **kw)


def test_llm_ingest_writes_allowed_rel_edges_with_provenance_and_reingest_uses_the_cache(
        local_llm: LocalModel, settings: Settings, tmp_path: Path) -> None:
    src = tmp_path / "rhine.txt"
    shutil.copy(FIX / "llm" / "rhine.txt", src)
    cfg = _llm_settings(local_llm, settings, tmp_path)
    services = build_services(cfg, start_embedded=False)
    try:
        assert services.local_llm is local_llm.server and services.llm is not None
        events: list[dict[str, Any]] = []
        res = ingest_path(services, src, _opts(), events.append)
        store = services.store
        chunks = {r["id"] for r in q(store, "MATCH (c:Chunk) RETURN c.id AS id")}
        assert res.chunks_new == len(chunks) == 3
        progress = [e for e in events if e["stage"] == "llm_extraction"]
        assert sorted(e["chunk"] for e in progress) == sorted(chunks)
        assert [e["current"] for e in progress] == [1, 2, 3] and all(e["total"] == 3 for e in progress)

        # entities: LLM-typed ones carry a configured type
        types = [r["t"] for r in q(store, "MATCH (e:Entity) WHERE e.type IS NOT NULL RETURN e.type AS t")]
        assert types and set(types) <= set(cfg.ingest_entity_types)
        # entity REL: allow-listed type, both endpoints entities that the named chunks mention
        rels = q(store, "MATCH (a:Entity)-[x:REL]->(b:Entity) RETURN a.id AS a, b.id AS b, x.type AS type, "
                        "x.chunks AS chunks, x.count AS n")
        mentions = {(r["c"], r["e"]) for r in q(store, "MATCH (c:Chunk)-[:MENTIONS]->(e:Entity) "
                                                       "RETURN c.id AS c, e.id AS e")}
        for r in rels:
            assert r["type"] in cfg.ingest_relation_types and r["a"] != r["b"]
            assert r["chunks"] and r["n"] == len(r["chunks"]) and set(r["chunks"]) <= chunks
            assert all((c, r["a"]) in mentions and (c, r["b"]) in mentions for c in r["chunks"])
        # chunk REL (window pairs): the eight known types, chunks of this ingest at both ends
        pair_rels = q(store, "MATCH (a:Chunk)-[x:REL]->(b:Chunk) "
                             "RETURN a.id AS a, b.id AS b, x.type AS type, x.confidence AS conf")
        assert all(r["type"] in REL_TYPES and {r["a"], r["b"]} <= chunks and 0 <= r["conf"] <= 1
                   for r in pair_rels)
        assert rels or pair_rels, "the model wrote no REL edge at all"
        assert res.llm_entity_rel_edges >= len(rels) and res.llm_rel_edges == len(pair_rels)
        assert_invariants(store)

        # a refresh re-extracts every stored chunk: all of it comes from the cache, no model call
        calls = services.llm.usage.calls
        again = ingest_path(services, src, _opts(refresh=True))
        assert services.llm.usage.calls == calls
        assert again.llm_cache_hits >= 3 and again.llm_entity_errors == res.llm_entity_errors
        after = q(store, "MATCH (a:Entity)-[x:REL]->(b:Entity) RETURN a.id AS a, b.id AS b, x.type AS type, "
                         "x.chunks AS chunks")
        assert sorted((r["a"], r["b"], r["type"], sorted(r["chunks"])) for r in after) == sorted(
            (r["a"], r["b"], r["type"], sorted(r["chunks"])) for r in rels)
        assert_invariants(store)
    finally:
        services.close()


def test_killing_the_model_server_mid_ingest_falls_back_and_leaves_no_half_written_chunk(
        local_llm: LocalModel, settings: Settings, tmp_path: Path) -> None:
    src = tmp_path / "notes.txt"
    shutil.copy(FIX / "ingest" / "notes.txt", src)
    cfg = _llm_settings(local_llm, settings, tmp_path, ingest_llm_relations="off")
    services = build_services(cfg, start_embedded=False)
    killed: list[str] = []

    def progress(event: dict[str, Any]) -> None:
        events.append(event)
        if event["stage"] == "llm_extraction" and not killed:
            killed.append(event["chunk"])
            local_llm.server.kill_for_test()  # SIGKILL: what a crash looks like; the supervisor restarts it

    events: list[dict[str, Any]] = []
    try:
        res = ingest_path(services, src, _opts(), progress)
        store = services.store
        n_chunks = q(store, "MATCH (c:Chunk) RETURN count(c) AS n")[0]["n"]
        assert killed and res.chunks_new == n_chunks == res.chunks_total > 3
        assert res.llm_entity_errors >= 1  # chunks whose extraction died fell back to heuristic entities
        failed = [e for e in events if e["stage"] == "llm_extraction" and "error" in e]
        assert any(e["error"].startswith("llm_") for e in failed)  # endpoint errors (others: bad replies)
        # every chunk is whole: document, embedding, entities counted, CO_OCCURS exact
        assert_invariants(store)
        with_mentions = {r["id"] for r in q(store, "MATCH (c:Chunk)-[:MENTIONS]->(:Entity) "
                                                   "RETURN DISTINCT c.id AS id")}
        assert {e["chunk"] for e in failed} <= with_mentions  # the fallback's entities were written
    finally:
        services.close()
        local_llm.wait_ready()
    assert local_llm.server.restarts >= 1 and local_llm.server.supervision()["state"] == "running"
