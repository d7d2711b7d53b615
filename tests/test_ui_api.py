"""The page's helper endpoints: GET /ui/api/chunks, /ui/api/kg/samples, /ui/api/kg/sample."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from app.core.config import Settings
from ingest.kg.loader import load_records
from ingest.kg.records import KGRecord
from ingest.options import IngestOptions
from ingest.pipeline import ingest_path
from tests.support.apps import app_client, stoppable_store


def test_chunk_previews_in_the_order_asked(settings: Settings, tmp_path: Path) -> None:
    doc = tmp_path / "notes.md"
    sentences = " ".join(f"Sentence number {i} about the approval flow." for i in range(60))
    doc.write_text("# Notes\n\n" + sentences, encoding="utf-8")
    short = "# Short\n\nThe finance controller approves budgets."
    (tmp_path / "short.md").write_text(short, encoding="utf-8")
    with app_client(settings) as c:
        services = c.app.state.services  # type: ignore[attr-defined]
        ingest_path(services, tmp_path, IngestOptions(llm_relations=False, checkpoint=False))
        rows = services.store.run("count_nodes_by_label")
        assert any(r["label"] == "Chunk" and r["count"] >= 2 for r in rows)
        preview = c.post("/ranking/preview", json={"question": "finance controller budgets"}).json()
        chunk_ids = [i["id"] for i in preview["items"]]
        assert len(chunk_ids) >= 2
        asked = [chunk_ids[1], "ext-not-stored", chunk_ids[0]]
        resp = c.get("/ui/api/chunks", params={"ids": asked})
        assert resp.status_code == 200
        chunks = resp.json()["chunks"]
        assert [ch["id"] for ch in chunks] == [chunk_ids[1], chunk_ids[0]]
        for ch in chunks:
            assert 0 < len(ch["preview"]) <= 320 and "\n" not in ch["preview"]
            assert ch["source"].endswith(".md") and ch["title"] in ("Notes", "Short")
        long = next(ch for ch in chunks if ch["title"] == "Notes")
        assert long["preview"].endswith("…")


def test_chunk_previews_bad_input_names_the_field(settings: Settings) -> None:
    with app_client(settings) as c:
        missing = c.get("/ui/api/chunks")
        assert missing.status_code == 422 and missing.json()["field"] == "ids"
        blank = c.get("/ui/api/chunks", params={"ids": ["  "]})
        assert blank.status_code == 422 and blank.json()["field"] == "ids.0"  # the item at fault
        nul = c.get("/ui/api/chunks", params={"ids": ["c1", "a\x00b"]})
        assert nul.status_code == 422 and nul.json()["field"] == "ids.1"
        assert "control" in nul.json()["message"]
        too_many = c.get("/ui/api/chunks", params={"ids": [f"c{i}" for i in range(51)]})
        assert too_many.status_code == 422 and "at most 50" in too_many.json()["message"]


def test_kg_sample_picker_and_sample_info(settings: Settings, store) -> None:  # type: ignore[no-untyped-def]
    records = [KGRecord(sample_id=f"WebQTrn-{i}", triples=[("A", "r.x", f"B{i}")], question=f"q {i}?",
                        answers=[f"B{i}"], q_entity=["A"], a_entity=[f"B{i}"]) for i in (0, 1, 10, 2)]
    load_records(store, "webqsp", records)
    load_records(store, "cwq", [KGRecord(sample_id="CWQ-1", triples=[("A", "r", "B")])])
    with app_client(settings) as c:
        body = c.get("/ui/api/kg/samples", params={"dataset": "webqsp"}).json()
        ids = [s["sample_id"] for s in body["samples"]]
        assert ids == ["WebQTrn-0", "WebQTrn-1", "WebQTrn-10", "WebQTrn-2"]
        assert body["samples"][0]["n_triples"] == 1
        pref = c.get("/ui/api/kg/samples", params={"dataset": "webqsp", "prefix": "WebQTrn-1", "limit": 1})
        assert [s["sample_id"] for s in pref.json()["samples"]] == ["WebQTrn-1"]
        assert c.get("/ui/api/kg/samples", params={"dataset": "nope"}).json()["samples"] == []
        info = c.get("/ui/api/kg/sample", params={"dataset": "webqsp", "sample_id": "WebQTrn-10"})
        assert info.status_code == 200
        assert info.json() == {"dataset": "webqsp", "sample_id": "WebQTrn-10", "question": "q 10?",
                               "answers": ["B10"], "q_entity": ["A"], "a_entity": ["B10"], "n_triples": 1}
        absent = c.get("/ui/api/kg/sample", params={"dataset": "cwq", "sample_id": "WebQTrn-10"})
        assert absent.status_code == 404 and absent.json()["field"] == "sample_id"


def test_kg_sample_picker_bad_input(settings: Settings) -> None:
    with app_client(settings) as c:
        cases: list[tuple[dict[str, Any], str]] = [({}, "dataset"), ({"dataset": " "}, "dataset"),
                              ({"dataset": "webqsp", "limit": 0}, "limit"),
                              ({"dataset": "webqsp", "limit": "x"}, "limit")]
        for params, field in cases:
            resp = c.get("/ui/api/kg/samples", params=params)
            assert resp.status_code == 422 and resp.json()["field"] == field, (params, resp.text)
        resp = c.get("/ui/api/kg/sample", params={"dataset": "webqsp"})
        assert resp.status_code == 422 and resp.json()["field"] == "sample_id"


def test_store_down_is_503(settings: Settings, tmp_path: Path) -> None:
    with stoppable_store(tmp_path, settings.graph_name) as (server, own), app_client(own) as c:
        server.stop()
        assert c.get("/ui").status_code == 200  # the page itself still loads and shows the status
        checks: list[tuple[str, dict[str, Any]]] = [
            ("/ui/api/chunks", {"ids": ["a"]}), ("/ui/api/kg/samples", {"dataset": "w"}),
            ("/ui/api/kg/sample", {"dataset": "w", "sample_id": "s"})]
        for path, params in checks:
            resp = c.get(path, params=params)
            assert resp.status_code == 503, (path, resp.text)
            assert resp.json()["error"] == "store_unavailable" and resp.json()["hint"]


def test_ingest_roots_lists_roots_and_their_entries(settings: Settings, tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "docs").mkdir(parents=True)
    (root / ".hidden").mkdir()
    (root / "a.md").write_text("x", encoding="utf-8")
    (root / "image.png").write_bytes(b"\x89PNG")
    missing = tmp_path / "not-there"
    with app_client(settings.model_copy(update={"ingest_roots": [root, missing]})) as c:
        body = c.get("/ui/api/ingest/roots").json()
    assert body["roots"] == [{"path": str(root.resolve()), "exists": True},
                             {"path": str(missing.resolve()), "exists": False}]
    r = root.resolve()
    assert body["paths"] == [str(r), str(r / "a.md"), str(r / "docs")]
