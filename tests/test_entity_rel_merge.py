"""Entity REL edges (LLM relations, issue 15) meet entity merges (issue 16): POST /entities/merge re-makes
the merged entity's relations on the survivor with their chunk provenance, drops those that would become
self-relations, and a later ingest's relations naming a merged key land on the survivor."""

from __future__ import annotations

from pathlib import Path

from app.core.config import Settings
from ingest.llm_entity_relations import EntityRelation
from ingest.redirects import redirect_relations
from tests.support.apps import app_client
from tests.support.graphs import ingest_docs, mentions
from tests.support.ingest_graph import q

NFL, LEAGUE = "nfl", "national football league"


def _rels(store) -> set[tuple[str, str, str, tuple[str, ...]]]:  # type: ignore[no-untyped-def]
    rows = q(store, "MATCH (a:Entity)-[x:REL]->(b:Entity) RETURN a.id AS a, b.id AS b, x.type AS t, "
                    "x.chunks AS chunks, x.count AS n")
    assert all(r["n"] == len(r["chunks"]) for r in rows)
    return {(r["a"], r["b"], r["t"], tuple(sorted(r["chunks"]))) for r in rows}


def test_merge_moves_entity_rel_edges_to_the_survivor(settings: Settings, tmp_path: Path) -> None:
    with app_client(settings) as c:
        services = c.app.state.services  # type: ignore[attr-defined]
        ingest_docs(services, tmp_path / "docs")
        store = services.store
        chunks = sorted({m["chunk"] for m in mentions(store)})
        other = sorted({m["entity"] for m in mentions(store)} - {NFL, LEAGUE})[0]
        c1, c2, c3 = chunks[0], chunks[1 % len(chunks)], chunks[2 % len(chunks)]
        store.run("ingest_entity_rel_set", {"rows": [
            {"a": NFL, "b": other, "type": "MEMBER_OF", "chunks": [c1]},
            {"a": LEAGUE, "b": other, "type": "MEMBER_OF", "chunks": [c3]},
            {"a": other, "b": NFL, "type": "PART_OF", "chunks": [c2]},
            {"a": NFL, "b": LEAGUE, "type": "RELATED_TO", "chunks": [c1]},  # a self-relation
        ]})
        resp = c.post("/entities/merge", json={"target": LEAGUE, "sources": [NFL]})
        assert resp.status_code == 200, resp.text
        assert resp.json()["entity_rel_edges"] == 2
        assert _rels(store) == {
            (LEAGUE, other, "MEMBER_OF", tuple(sorted({c1, c3}))),
            (other, LEAGUE, "PART_OF", (c2,)),
        }
        again = c.post("/entities/merge", json={"target": LEAGUE, "sources": [NFL]})
        assert again.status_code == 200 and again.json()["entity_rel_edges"] == 0  # idempotent
        assert len(_rels(store)) == 2


def test_redirected_relations_land_on_the_survivor_and_self_relations_drop() -> None:
    rels = [EntityRelation("nfl", "x", "MEMBER_OF", "c1"), EntityRelation("nfl", "league", "PART_OF", "c1"),
            EntityRelation("y", "x", "CAUSES", "c2")]
    out = redirect_relations({"nfl": "league"}, rels)
    assert out == [EntityRelation("league", "x", "MEMBER_OF", "c1"), EntityRelation("y", "x", "CAUSES", "c2")]
    assert redirect_relations({}, rels) == rels


def test_document_delete_releases_entity_rel_provenance(settings: Settings, tmp_path: Path) -> None:
    with app_client(settings) as c:
        services = c.app.state.services  # type: ignore[attr-defined]
        folder = ingest_docs(services, tmp_path / "docs")
        store = services.store
        saga = str((folder / "saga.md").resolve())
        rows = q(store, "MATCH (c:Chunk) RETURN c.id AS id, c.source AS source")
        in_saga = {r["id"] for r in rows if r["source"] == saga}
        ents: dict[str, set[str]] = {}
        for m in mentions(store):
            ents.setdefault(m["chunk"], set()).add(m["entity"])
        # as LLM extraction writes them: a relation's chunks mention both its endpoints
        s_chunk = next(ch for ch in sorted(in_saga) if {"york", "harald hardrada"} <= ents[ch])
        o_chunk = next(ch for ch in sorted(set(ents) - in_saga) if {"york", "harald hardrada"} <= ents[ch])
        nfl_chunk = next(ch for ch in sorted(in_saga) if NFL in ents[ch] and "york" in ents[ch])
        store.run("ingest_entity_rel_set", {"rows": [
            {"a": "harald hardrada", "b": "york", "type": "LOCATED_IN", "chunks": [s_chunk, o_chunk]},
            {"a": NFL, "b": "york", "type": "RELATED_TO", "chunks": [nfl_chunk]},
        ]})
        doc = next(d for d in c.get("/documents").json()["documents"] if d["source"] == saga)
        assert c.delete(f"/documents/{doc['id']}").status_code == 200
        # the first edge keeps its other chunk; the second lost its only one
        assert _rels(store) == {("harald hardrada", "york", "LOCATED_IN", (o_chunk,))}
