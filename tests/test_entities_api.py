"""GET /entities/search, GET /entities/duplicates and POST /entities/merge through the real app: proposals
with evidence; a merge moves mentions and keeps every derived count equal to a recount from MENTIONS;
merges are idempotent, survive re-ingest and reach the caches; bad input is a clear 4xx."""

from __future__ import annotations

from pathlib import Path

from app.core.config import Settings
from app.retrieval.bm25 import lexical_index
from app.retrieval.state import caches
from ingest.options import IngestOptions
from ingest.pipeline import ingest_path
from tests.support.apps import app_client
from tests.support.graphs import (
    expected_cooccurs,
    expected_relates,
    ingest_docs,
    mentions,
    stored_cooccurs,
    stored_relates,
)

NFL, LEAGUE = "nfl", "national football league"


def _freq(c, key: str) -> int | None:  # type: ignore[no-untyped-def]
    rows = c.app.state.services.store.run("graph_entity_get", {"ids": [key]})
    return int(rows[0]["freq"]) if rows else None


def test_search_suggests_entities_prefix_first(settings: Settings, tmp_path: Path) -> None:
    with app_client(settings) as c:
        ingest_docs(c.app.state.services, tmp_path / "docs")  # type: ignore[attr-defined]
        body = c.get("/entities/search", params={"q": "Harald"}).json()
        names = [e["name"] for e in body["entities"]]
        assert names[0] == "Harald Hardrada" and all("harald" in e["id"] for e in body["entities"])
        inside = c.get("/entities/search", params={"q": "football"}).json()["entities"]
        assert [e["id"] for e in inside] == [LEAGUE]
        assert len(c.get("/entities/search", params={"q": "a", "limit": 2}).json()["entities"]) == 2
        for params in ({"q": " "}, {"q": "x", "limit": 0}, {"q": "x", "limit": 51}, {}):
            resp = c.get("/entities/search", params=params)
            assert resp.status_code == 422 and resp.json()["error"] == "invalid_request", params


def test_duplicates_propose_pairs_with_evidence(settings: Settings, tmp_path: Path) -> None:
    with app_client(settings) as c:
        ingest_docs(c.app.state.services, tmp_path / "docs")  # type: ignore[attr-defined]
        body = c.get("/entities/duplicates", params={"min_score": 0.5}).json()
        assert body["min_score"] == 0.5 and body["entities_compared"] >= 8
        pairs = {frozenset((p["a"]["id"], p["b"]["id"])): p for p in body["pairs"]}
        acronym = pairs[frozenset((NFL, LEAGUE))]
        assert acronym["evidence"]["rule"] == "acronym" and acronym["suggested_target"] in (NFL, LEAGUE)
        possessive = pairs[frozenset(("harald hardrada", "harald hardrada s"))]
        assert possessive["evidence"]["rule"] == "same_after_cleanup"
        assert possessive["suggested_target"] == "harald hardrada"
        for p in body["pairs"]:
            ev = p["evidence"]
            assert 0.5 <= p["score"] <= 1.0
            assert {"name", "name_embedding", "context", "shared_chunks", "a_chunks", "b_chunks"} <= set(ev)
        scores = [p["score"] for p in body["pairs"]]
        assert scores == sorted(scores, reverse=True)
        assert frozenset(("canton", "york")) not in pairs  # different names, nothing in common
        strict = c.get("/entities/duplicates", params={"min_score": 0.99, "limit": 1}).json()
        assert len(strict["pairs"]) <= 1 and all(p["score"] >= 0.99 for p in strict["pairs"])
        for params in ({"min_score": 2}, {"min_score": -1}, {"limit": 0}, {"limit": 501}, {"min_score": "x"}):
            resp = c.get("/entities/duplicates", params=params)
            assert resp.status_code == 422, params


def test_merge_moves_mentions_and_keeps_derived_counts_exact(settings: Settings, tmp_path: Path) -> None:
    with app_client(settings) as c:
        services = c.app.state.services  # type: ignore[attr-defined]
        folder = ingest_docs(services, tmp_path / "docs")
        store = services.store
        before = mentions(store)
        chunks_nfl = {m["chunk"]: m["count"] for m in before if m["entity"] == NFL}
        chunks_league = {m["chunk"]: m["count"] for m in before if m["entity"] == LEAGUE}
        assert chunks_nfl and chunks_league and set(chunks_nfl) & set(chunks_league)
        lexical_index(services.extras, store).current()  # built, fresh
        caches(services).answers.put("k", {"answer": "cached"})

        resp = c.post("/entities/merge", json={"target": "National Football League", "sources": ["NFL"]})
        assert resp.status_code == 200, resp.text
        body = resp.json()
        assert body["merged"] == [NFL] and body["already_merged"] == []
        assert body["target"]["id"] == LEAGUE and "NFL" in body["target"]["aliases"]
        assert body["mentions_moved"] == len(chunks_nfl)
        after = mentions(store)
        assert not [m for m in after if m["entity"] == NFL]
        moved = {m["chunk"]: m["count"] for m in after if m["entity"] == LEAGUE}
        union = set(chunks_nfl) | set(chunks_league)
        assert set(moved) == union
        assert all(moved[ch] == chunks_nfl.get(ch, 0) + chunks_league.get(ch, 0) for ch in union)
        assert _freq(c, LEAGUE) == len(union) and _freq(c, NFL) is None
        assert stored_cooccurs(store) == expected_cooccurs(store)
        sources = sorted(str(p) for p in folder.resolve().iterdir())
        assert stored_relates(store) == expected_relates(store, sources, settings.relation_window)
        assert lexical_index(services.extras, store).stale and caches(services).answers.get("k") is None

        # the merged name now finds the survivor, in the graph view and its side panel
        graph = c.get("/graph", params={"entity": "NFL"}).json()
        assert graph["entry"]["id"] == LEAGUE and graph["entry"]["merged_from"] == NFL
        assert c.get("/graph/node", params={"id": f"e:{LEAGUE}"}).json()["properties"]["merged"] == [NFL]
        again = c.post("/entities/merge", json={"target": LEAGUE, "sources": NFL}).json()
        assert again["merged"] == [] and again["already_merged"] == [NFL]
        assert mentions(store) == after  # a no-op

        # a refresh re-extracts entities from the stored chunks: "NFL" lands on the survivor again
        ingest_path(services, folder, IngestOptions(refresh=True, llm_relations=False, checkpoint=False))
        assert _freq(c, NFL) is None and _freq(c, LEAGUE) == len(union)
        assert stored_cooccurs(store) == expected_cooccurs(store)


def test_merge_bad_input_and_conflicts(settings: Settings, tmp_path: Path) -> None:
    with app_client(settings) as c:
        ingest_docs(c.app.state.services, tmp_path / "docs")  # type: ignore[attr-defined]
        cases = [
            ({"target": "York", "sources": ["York"]}, 422, "sources"),
            ({"target": "York", "sources": []}, 422, "sources"),
            ({"target": "York", "sources": [5]}, 422, "sources"),
            ({"target": " ", "sources": ["Canton"]}, 422, "target"),
            ({"target": "York", "sources": ["Nobody Here"]}, 404, "sources"),
            ({"target": "Nobody Here", "sources": ["York"]}, 404, "target"),
            ({"sources": ["York"]}, 422, "target"),
            ({"target": "York", "sources": ["Canton"], "extra": 1}, 422, "extra"),
        ]
        for body, status, field in cases:
            resp = c.post("/entities/merge", json=body)
            assert resp.status_code == status, (body, resp.text)
            assert resp.json()["field"] == field, (body, resp.json())
        assert c.post("/entities/merge", json={"target": LEAGUE, "sources": [NFL]}).status_code == 200
        elsewhere = c.post("/entities/merge", json={"target": "York", "sources": [NFL]})
        assert elsewhere.status_code == 409 and LEAGUE in elsewhere.json()["message"]
        gone = c.post("/entities/merge", json={"target": NFL, "sources": ["York"]})
        assert gone.status_code == 404 and LEAGUE in gone.json()["message"]
        # merging the survivor on: the old redirect follows it
        assert c.post("/entities/merge", json={"target": "Canton", "sources": [LEAGUE]}).status_code == 200
        assert c.get("/graph", params={"entity": "NFL"}).json()["entry"]["id"] == "canton"
