"""POST/GET/DELETE /documents over real HTTP on the real store, and citations (locations) in /query, its
stream trailer, /ranking/preview, CoRAG /retrieve and /ui/api/chunks."""

from __future__ import annotations

import json
import re
import threading
import time
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from app.core.config import Settings
from ingest.jobs import ingest_jobs
from tests.browser.server import live_server
from tests.support.apps import app_client, stoppable_store
from tests.support.pdf import write_pdf

GUIDE = """# Boiler guide

The boiler heats water for the radiators of the building.

## Maintenance

### Pressure

Check the pressure gauge every month.
Top up the circuit when the needle falls below one bar.

### Burner

Clean the nozzle once a year.
A yellow flame means the nozzle is dirty.
"""
TRAILER_LINE = re.compile(
    r"^- (\d+)\. (\S+) \(rank=(\d+), reason=(\w+), score=([0-9.]+)((?:, \w+=[\w-]+)*)\)$")


@pytest.fixture
def doc_settings(settings: Settings, tmp_path: Path) -> Settings:
    # small chunks without overlap: each PDF page and Markdown section is its own chunk
    return settings.model_copy(update={"uploads_dir": tmp_path / "uploads",
                                       "ingest_roots": [tmp_path / "data"],
                                       "ingest_chunk_size": 200, "ingest_chunk_overlap": 0})


@pytest.fixture
def client(doc_settings: Settings) -> Iterator[Any]:
    with app_client(doc_settings) as c:
        yield c


def _manual(tmp_path: Path) -> Path:
    return write_pdf(tmp_path / "manual.pdf", [
        ["Heating manual for the Ridgeway building, written for the caretakers who look after the plant room",
         "and its pumps, valves and controls throughout the year."],
        ["Chapter two lists the spare parts that the caretakers keep in the plant room cupboard, with their",
         "order numbers and the supplier that delivers them."],
        ["The expansion vessel must be checked by a certified engineer every two years."]])


def _upload(client: Any, files: list[tuple[str, bytes]], **params: Any) -> Any:
    return client.post("/documents", params=params,
                       files=[("file", (name, data, "application/octet-stream")) for name, data in files])


def test_upload_list_detail_and_citations(client: Any, doc_settings: Settings, tmp_path: Path) -> None:
    pdf = _manual(tmp_path).read_bytes()
    resp = _upload(client, [("guide.md", GUIDE.encode()), ("../../manual.pdf", pdf)])
    assert resp.status_code == 201, resp.text
    body = resp.json()
    assert body["ingested"] is True and len(body["documents"]) == 2
    md, manual = body["documents"]
    uploads = Path(doc_settings.uploads_dir).resolve()
    assert manual["filename"] == "../../manual.pdf" and manual["name"] == "manual.pdf"
    assert Path(manual["source"]) == uploads / manual["content_hash"][:16] / "manual.pdf"
    assert Path(manual["source"]).read_bytes() == pdf and manual["bytes"] == len(pdf)
    assert md["ingest"]["chunks_new"] == 3 and manual["ingest"]["chunks_new"] >= 1 and not md["duplicate"]

    listing = client.get("/documents").json()
    assert listing["total"] == 2 and listing["limits"]["max_files"] == doc_settings.upload_max_files
    item = next(d for d in listing["documents"] if d["id"] == md["id"])
    assert item | {"ingested_at": None} == {
        "id": md["id"], "name": "guide.md", "title": "Boiler guide", "source": md["source"],
        "content_hash": md["content_hash"], "bytes": len(GUIDE.encode()), "chunks": 3, "documents": 1,
        "entities": item["entities"], "ingested_at": None, "uploaded": True}
    assert item["entities"] > 0 and re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$", item["ingested_at"])
    page = client.get("/documents", params={"limit": 1, "offset": 1}).json()
    assert page["total"] == 2 and len(page["documents"]) == 1 and page["offset"] == 1

    detail = client.get(f"/documents/{md['id']}").json()
    assert [c["section"] for c in detail["chunk_items"]] == [
        "Boiler guide", "Boiler guide > Maintenance > Pressure", "Boiler guide > Maintenance > Burner"]
    assert [c["location"] for c in detail["chunk_items"]] == [
        {"line_start": 3, "line_end": 3}, {"line_start": 9, "line_end": 10},
        {"line_start": 14, "line_end": 15}]
    assert detail["chunk_items"][1]["location_label"] == "lines 9-10"
    assert detail["chunk_items"][0]["preview"].startswith("The boiler heats")  # headings travel as paths
    assert detail["parts"] == [{"id": md["id"], "title": "Boiler guide", "chunks": 3}]
    assert detail["top_entities"] and all(e["chunks"] >= 1 for e in detail["top_entities"])
    one = client.get(f"/documents/{md['id']}", params={"chunk_offset": 2, "chunk_limit": 1}).json()
    assert [c["seq"] for c in one["chunk_items"]] == [2]

    q = "Who must check the expansion vessel?"
    answer = client.post("/query", json={"question": q}).json()
    top = answer["sources"][0]
    assert top["id"].startswith(manual["id"]) and top["location"] == {"page": 3} and top["section"] is None
    assert any(s.get("location", {}).get("line_start") for s in answer["sources"])
    stream = client.post("/query", json={"question": q, "stream": True}).text
    lines = stream.rpartition("[SOURCES]")[2].strip().splitlines()
    parsed = [TRAILER_LINE.match(line) for line in lines]
    assert all(parsed), lines
    assert parsed[0][6] == ", page=3"  # type: ignore[index]
    assert any(re.fullmatch(r", lines=\d+-\d+", m[6]) for m in parsed)  # type: ignore[index]
    preview = client.post("/ranking/preview", json={"question": q}).json()
    assert preview["items"][0]["location"] == {"page": 3}
    passages = client.post("/retrieve", json={"query": "How often is the burner nozzle cleaned?"}).json()
    best = passages["chunks"][0]
    assert best["location"] == {"line_start": 14, "line_end": 15}
    assert best["section"] == "Boiler guide > Maintenance > Burner"
    assert best["contents"].startswith("Clean the nozzle")
    chunks = client.get("/ui/api/chunks", params={"ids": [top["id"], best["id"]]}).json()["chunks"]
    assert [c["location_label"] for c in chunks] == ["p. 3", "lines 14-15"]


def test_repeat_upload_is_idempotent_and_delete_removes_file_and_graph(client: Any, tmp_path: Path) -> None:
    first = _upload(client, [("guide.md", GUIDE.encode())]).json()["documents"][0]
    again = _upload(client, [("guide.md", GUIDE.encode())]).json()["documents"][0]
    assert again["id"] == first["id"] and again["duplicate"] is True
    assert again["ingest"]["chunks_new"] == 0 and again["ingest"]["chunks_skipped"] == 3
    other = _upload(client, [("guide.md", GUIDE.replace("month", "week").encode())]).json()["documents"][0]
    assert other["id"] != first["id"] and Path(first["source"]).is_file()  # no overwrite
    assert client.get("/documents").json()["total"] == 2

    gone = client.delete(f"/documents/{first['id']}")
    assert gone.status_code == 200, gone.text
    assert gone.json() | {"entities_removed": 0, "entities_updated": 0} == {
        "id": first["id"], "name": "guide.md", "source": first["source"], "deleted": True,
        "chunks_deleted": 3, "documents_deleted": 1, "entities_removed": 0, "entities_updated": 0,
        "file_removed": True}
    assert not Path(first["source"]).exists() and not Path(first["source"]).parent.exists()
    assert client.get(f"/documents/{first['id']}").status_code == 404
    assert client.delete(f"/documents/{first['id']}").json()["field"] == "id"
    assert [d["id"] for d in client.get("/documents").json()["documents"]] == [other["id"]]
    sources = client.post("/query", json={"question": "How often is the pressure checked?"}).json()["sources"]
    assert sources and all(s["id"].startswith(other["id"]) for s in sources)


def test_upload_without_ingest_then_stream_the_ingest(client: Any) -> None:
    doc = _upload(client, [("notes.txt", b"Line one about the boiler.\nLine two about the burner.\n")],
                  ingest="false").json()["documents"][0]
    assert doc["ingest"] is None and client.get("/documents").json()["total"] == 0
    with client.stream("GET", doc["stream"]) as resp:
        assert resp.status_code == 200
        events = [json.loads(line[5:]) for line in resp.iter_lines()
                  if line.startswith("data:") and line[5:].strip()]
    assert events[-1] == {"stage": "done"} and any(e.get("stage") == "embedding_progress" for e in events)
    assert client.get("/documents").json()["documents"][0]["id"] == doc["id"]


def test_bad_input_answers_clear_4xx(client: Any, doc_settings: Settings) -> None:
    cases: list[tuple[dict[str, Any], int, str]] = [
        ({"files": [("file", ("tool.exe", b"MZ", "application/octet-stream"))]}, 415, "unsupported_type"),
        ({"content": b"{}", "headers": {"content-type": "application/json"}}, 415, "unsupported_media_type"),
        ({"files": [("file", ("empty.txt", b"", "text/plain"))]}, 422, "invalid_request"),
        ({"files": [("upload", ("a.txt", b"x", "text/plain"))]}, 422, "invalid_request"),
        ({"data": {"file": "not a file"}, "files": [("x", ("a.txt", b"x", "text/plain"))]}, 422,
         "invalid_request"),
    ]
    for kwargs, status, error in cases:
        resp = client.post("/documents", **kwargs)
        assert resp.status_code == status and resp.json()["error"] == error, (kwargs, resp.text)
        assert resp.json()["message"].split(":")[0] in ("file", "body")
    for path, params, field in [("/documents", {"limit": 0}, "limit"),
                                ("/documents", {"offset": -1}, "offset"),
                                ("/documents/doc-123", {}, "doc_id"), ("/documents/x/../y", {}, None),
                                ("/documents/doc-0123456789abcdef", {"chunk_limit": 5000}, "chunk_limit")]:
        resp = client.get(path, params=params)
        assert resp.status_code in (404, 422) and resp.json()["error"] in ("invalid_request", "not_found")
        if field:
            assert resp.status_code == 422 and resp.json()["field"] == field, resp.text
    unknown = client.get("/documents/doc-0123456789abcdef")
    assert unknown.status_code == 404 and "no document" in unknown.json()["message"]
    assert client.delete("/documents/doc-0123456789abcdef").status_code == 404
    assert client.delete("/documents/nope").json()["field"] == "doc_id"  # the path parameter's name
    stored = [p for p in Path(doc_settings.uploads_dir).rglob("*") if p.is_file()]
    assert stored == []  # nothing refused was kept


def test_size_and_count_limits_answer_413_and_keep_nothing(settings: Settings, tmp_path: Path) -> None:
    small = settings.model_copy(update={"uploads_dir": tmp_path / "up", "upload_max_bytes": 2000,
                                        "upload_max_files": 2})
    with app_client(small) as c:
        big = c.post("/documents", files=[("file", ("ok.txt", b"fine", "text/plain")),
                                          ("file", ("big.txt", b"x" * 2001, "text/plain"))])
        assert big.status_code == 413 and big.json()["error"] == "too_large"
        assert big.json()["limit_bytes"] == 2000 and "NEORAG_UPLOAD_MAX_BYTES" in big.json()["message"]
        many = c.post("/documents", files=[("file", (f"{i}.txt", b"x", "text/plain")) for i in range(3)])
        assert many.status_code == 413 and many.json()["error"] == "too_many_files"
        huge = c.post("/documents", content=b"x" * 10, headers={
            "content-type": "multipart/form-data; boundary=b", "content-length": str(10 ** 9)})
        assert huge.status_code == 413
        assert [p for p in (tmp_path / "up").rglob("*") if p.is_file()] == []
        assert c.get("/documents").json()["total"] == 0


def test_delete_while_the_file_is_being_ingested_is_409(client: Any) -> None:
    doc = _upload(client, [("guide.md", GUIDE.encode())]).json()["documents"][0]
    services = client.app.state.services
    with ingest_jobs(services).holding(Path(doc["source"]).parent, "ingest"):
        resp = client.delete(f"/documents/{doc['id']}")
        assert resp.status_code == 409 and "retry" in resp.json()["message"]
    with ingest_jobs(services).holding(Path(doc["source"]), "delete"):
        resp = client.post("/ingest", json={"path": doc["source"]})
        assert resp.status_code == 409 and "a delete of" in resp.json()["message"]
    again = client.post("/ingest", params={"incremental": "true"}, json={"path": doc["source"]})
    assert again.status_code == 200  # the uploads folder is an allowed ingest root
    assert client.delete(f"/documents/{doc['id']}").status_code == 200


def test_store_down_answers_503(tmp_path: Path, settings: Settings) -> None:
    with stoppable_store(tmp_path, settings.graph_name) as (server, own):
        own = own.model_copy(update={"uploads_dir": tmp_path / "up"})
        with app_client(own) as c:
            server.stop()
            calls = [c.get("/documents"), c.get("/documents/doc-0123456789abcdef"),
                     c.delete("/documents/doc-0123456789abcdef"),
                     c.post("/documents", files=[("file", ("a.txt", b"text", "text/plain"))])]
            for resp in calls:
                assert resp.status_code == 503, resp.text
                assert resp.json()["error"] == "store_unavailable" and resp.json()["hint"]
            assert not (tmp_path / "up").exists()  # the upload was refused before its body was read


def test_upload_streams_to_disk_in_pieces(doc_settings: Settings, tmp_path: Path) -> None:
    """A 24 MiB upload: the part file grows on disk while the body is still being sent, and the server's
    Python allocations stay far below the file's size (peak measured with tracemalloc)."""
    piece, pieces = b"The boiler manual, line by line.\n" * 2048, 360  # 66 KiB x 360 = 24 MiB
    size = len(piece) * pieces
    incoming = Path(doc_settings.uploads_dir) / ".incoming"
    seen_on_disk: list[int] = []
    boundary = "neorag-test-boundary"
    head = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"big.txt\"\r\n"
            "Content-Type: text/plain\r\n\r\n").encode()
    tail = f"\r\n--{boundary}--\r\n".encode()

    def body() -> Iterator[bytes]:
        yield head
        for i in range(pieces):
            if i == pieces // 2:  # half sent: the server must already have written most of it
                deadline = time.monotonic() + 30
                while time.monotonic() < deadline:
                    parts = list(incoming.glob("*.part")) if incoming.is_dir() else []
                    if parts and parts[0].stat().st_size >= size // 2 - (2 << 20):
                        seen_on_disk.append(parts[0].stat().st_size)
                        break
                    time.sleep(0.02)
            yield piece
        yield tail

    with live_server(doc_settings) as server:
        tracemalloc.start()
        try:
            resp = httpx.post(f"{server.url}/documents", params={"ingest": "false"}, content=body(),
                              timeout=120,
                              headers={"content-type": f"multipart/form-data; boundary={boundary}"})
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert resp.status_code == 201, resp.text
    doc = resp.json()["documents"][0]
    assert doc["bytes"] == size and Path(doc["source"]).stat().st_size == size
    assert seen_on_disk, "the part file did not grow while the body was being sent"
    assert peak < 8 * 2**20, f"peak Python allocations {peak / 2**20:.1f} MiB for a 24 MiB upload"


def test_concurrent_uploads_of_the_same_file_agree(client: Any) -> None:
    results: list[int] = []

    def send() -> None:
        results.append(_upload(client, [("same.txt", b"Identical content.")], ingest="false").status_code)

    threads = [threading.Thread(target=send) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [201] * 4
