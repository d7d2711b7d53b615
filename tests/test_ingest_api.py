"""POST /ingest and GET /ingest/stream through the real app: counts, SSE order, roots, 404/409/422/503."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.services.embedding_record import record_model
from ingest.checkpoint import checkpoint_path
from ingest.jobs import ingest_jobs
from tests.support.apps import app_client
from tests.support.fake_openai import ScriptedOpenAI
from tests.support.ingest_graph import counts
from tests.support.reasoning import store_down_client

FIX = Path(__file__).parent / "fixtures" / "ingest"


def _root(tmp_path: Path, names: list[str]) -> Path:
    root = tmp_path / "data"
    (root / "docs").mkdir(parents=True)
    for name in names:
        shutil.copy(FIX / name, root / "docs" / name)
    return root


def _sse(client: TestClient, params: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(event name, data) for every SSE event until the stream ends."""
    out: list[tuple[str, dict[str, Any]]] = []
    with client.stream("GET", "/ingest/stream", params=params) as resp:
        assert resp.status_code == 200 and resp.headers["content-type"].startswith("text/event-stream")
        event = "message"
        for line in resp.iter_lines():
            if line.startswith("event:"):
                event = line.split(":", 1)[1].strip()
            elif line.startswith("data:"):
                out.append((event, json.loads(line.split(":", 1)[1])))
                event = "message"
    return out


def test_post_ingest_counts_and_bad_input(settings, store, tmp_path) -> None:  # type: ignore[no-untyped-def]
    root = _root(tmp_path, ["extra.jsonl", "guide.md"])
    (tmp_path / "outside.txt").write_text("Secret Thing.")
    (root / "link.txt").symlink_to(tmp_path / "outside.txt")
    with app_client(settings.model_copy(update={"ingest_roots": [root]})) as client:
        r = client.post("/ingest", params={"incremental": "true"}, json={"path": str(root / "docs")})
        assert r.status_code == 200, r.text
        body = r.json()
        for key in ("files_processed", "chunks_new", "chunks_skipped", "entities_created",
                    "relations_created", "cooccur_edges", "llm_rel_edges", "elapsed_sec", "incremental"):
            assert key in body
        assert body["files_processed"] == 2 and body["incremental"] is True
        assert body["chunks_new"] == counts(store)["node:Chunk"]
        inc = {"incremental": "true"}
        again = client.post("/ingest", params=inc, json={"path": str(root / "docs")}).json()
        assert again["chunks_new"] == 0 and again["chunks_skipped"] == body["chunks_new"]
        cases: list[tuple[dict[str, str], dict[str, Any], int]] = [
            ({"path": "/etc"}, {}, 403), ({"path": str(root / "link.txt")}, {}, 403),
            ({"path": str(root / "missing")}, {}, 404), ({}, {}, 422), ({"path": ""}, {}, 422),
            ({"path": str(root / "docs")}, {"rel_window": 0}, 422),
            ({"path": str(root / "docs")}, {"incremental": "maybe"}, 422),
            ({"path": str(root / "docs" / "guide.md")}, {"inc_rel_only": "true"}, 422),
            ({"path": str(root / "docs" / "guide.md")}, {"inc_rel_only": "true", "new_after": "x"}, 503),
        ]
        for body_in, params, status in cases:
            resp = client.post("/ingest", params=params, json=body_in)
            assert resp.status_code == status, (body_in, params, resp.text)
            payload = resp.json()
            assert payload["error"] in ("invalid_request", "llm_unavailable"), payload
            if status != 503:
                assert payload["field"] in ("path", "rel_window", "incremental", "new_after"), payload
        assert "ingest roots" in client.post("/ingest", json={"path": "/etc"}).json()["message"]


def test_sse_stage_order_and_result(settings, store, tmp_path) -> None:  # type: ignore[no-untyped-def]
    root = _root(tmp_path, ["notes.txt", "extra.jsonl"])
    with app_client(settings.model_copy(update={"ingest_roots": [root]})) as client:
        events = _sse(client, {"path": str(root / "docs"), "checkpoint": "true"})
    names = [e for e, _ in events]
    stages = [d.get("stage") for _, d in events]
    assert names[0] == "start" and events[0][1] == {}
    assert names.count("result") == 1 and stages[-1] == "done" and stages[-2] == "result"
    order = ["scan_input", "hash_computed", "schema_index", "existing_scan", "embedding_batch",
             "embedding_progress", "entity_extraction",
             "cooccurrence", "relates_to", "relation_start", "relation_extraction_done",
             "result", "done"]
    assert [stages.index(s) for s in order] == sorted(stages.index(s) for s in order)
    progress = [d for _, d in events if d.get("stage") == "embedding_progress"]
    assert all("current" in d and "total" in d for d in progress)
    assert progress[-1]["current"] == progress[-1]["total"]
    result = events[-2][1]["result"]
    assert result["chunks_new"] == counts(store)["node:Chunk"] == progress[-1]["total"]


def test_sse_error_event_and_prevalidation(settings, store, tmp_path) -> None:  # type: ignore[no-untyped-def]
    root = _root(tmp_path, ["extra.jsonl"])
    record_model(store, "tiny-8", 8)  # the graph's vectors come from another embedder: one-line failure
    with app_client(settings.model_copy(update={"ingest_roots": [root]})) as client:
        events = _sse(client, {"path": str(root / "docs")})
        error = events[-1][1]
        assert error["stage"] == "error" and "(8-d)" in error["error"] and "\n" not in error["error"]
        assert [d.get("stage") for _, d in events][:2] == [None, "scan_input"]
        for params, status in (({"path": "/etc"}, 403), ({"path": str(root / "nope")}, 404), ({}, 422)):
            r = client.get("/ingest/stream", params=params)
            assert r.status_code == status and r.headers["content-type"].startswith("application/json")


def test_concurrent_same_path_409_and_disconnect_continues(settings, store,  # type: ignore[no-untyped-def]
                                                           tmp_path) -> None:
    root = _root(tmp_path, ["notes.txt"])
    slow = {"sleep": 0.3, "content": '{"relations": []}'}
    with ScriptedOpenAI([], default=slow) as llm:
        cfg = settings.model_copy(update={"ingest_roots": [root], "llm_base_url": llm.base_url,
                                          "ingest_chunk_size": 300, "ingest_chunk_overlap": 60})
        with app_client(cfg) as client:
            path = str(root / "docs")
            with client.stream("GET", "/ingest/stream", params={"path": path}) as resp:
                first = next(resp.iter_lines())
                assert first.startswith("event: start")
            # the client went away; the job keeps running and holds the path
            services = client.app.state.services  # type: ignore[attr-defined]
            assert path in ingest_jobs(services).running()
            busy = client.post("/ingest", json={"path": path})
            assert busy.status_code == 409 and busy.json()["field"] == "path"
            deadline = time.monotonic() + 120
            while ingest_jobs(services).running() and time.monotonic() < deadline:
                time.sleep(0.2)
            assert ingest_jobs(services).running() == []
            c = counts(store)
            assert c["node:Chunk"] >= 5 and c.get("rel:MENTIONS", 0) > 0
            ck_file = checkpoint_path((root / "docs").resolve(), cfg.checkpoint_dir(), root)
            ck = json.loads(ck_file.read_text())
            pair_requests = [r for r in llm.requests  # (the others: entity relations, one per chunk)
                             if str(r["messages"][0]["content"]).startswith("You label semantic relations")]
            assert ck["complete"] is True and len(pair_requests) == len(ck["rel_pairs"]) > 0


def test_store_down_is_503(settings, backend, tmp_path) -> None:  # type: ignore[no-untyped-def]
    root = _root(tmp_path, ["extra.jsonl"])
    with store_down_client(backend, settings.model_copy(update={"ingest_roots": [root]})) as client:
        r = client.post("/ingest", json={"path": str(root / "docs")})
        assert r.status_code == 503 and r.json()["error"] == "store_unavailable"
        s = client.get("/ingest/stream", params={"path": str(root / "docs")})
        assert s.status_code == 503 and s.json()["error"] == "store_unavailable"


def test_post_ingest_500_is_logged_with_its_traceback(settings, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                      monkeypatch: pytest.MonkeyPatch,
                                                      caplog: pytest.LogCaptureFixture) -> None:
    """A bug in the ingest: one JSON line to the client, the traceback in the log (as /ingest/stream logs
    it; issue 25, item 9)."""
    import ingest.jobs as jobs

    def broken(*args: Any, **kwargs: Any) -> dict[str, Any]:
        raise RuntimeError("simulated ingest bug")

    monkeypatch.setattr(jobs, "run_ingest", broken)
    root = _root(tmp_path, ["notes.txt"])
    with app_client(settings.model_copy(update={"ingest_roots": [root]})) as client:
        resp = client.post("/ingest", json={"path": str(root / "docs")})
        assert resp.status_code == 500, resp.text
        assert resp.json() == {"error": "ingest_failed", "message": "RuntimeError: simulated ingest bug"}
        assert client.post("/ingest", json={"path": str(root / "docs")}).status_code == 500  # no 409 left
    logged = [r for r in caplog.records if r.name == "app.api.routers.ingest" and r.levelname == "ERROR"]
    assert logged and logged[0].exc_info is not None
    assert "simulated ingest bug" in caplog.text and "Traceback" in caplog.text
