"""One bad file never blocks an ingest (issue 25, item 3): crafted PDFs (an unknown stream filter, an
unsupported encryption: the PDF library raises NotImplementedError) and a text past
NEORAG_INGEST_MAX_FILE_CHARS are per-file errors in POST /ingest's result and in the SSE stream while every
other file is ingested; an upload that cannot be ingested is removed, never left on disk unlisted."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient

from app.core.config import Settings
from tests.support.apps import app_client
from tests.support.pdf import write_crafted_pdf, write_pdf

CAP = 3000


def _folder(root: Path) -> dict[str, Path]:
    docs = root / "docs"
    docs.mkdir(parents=True)
    (docs / "notes.md").write_text("# Notes\n\nThe boiler room key is kept by Ada Lovelace.\n")
    (docs / "plain.txt").write_text("The garden shed holds the lawn mower.\n")
    write_pdf(docs / "manual.pdf", [["The pressure valve is checked every spring."]])
    return {"filter": write_crafted_pdf(docs / "filter.pdf", "unknown_filter"),
            "encrypt": write_crafted_pdf(docs / "encrypt.pdf", "bad_encryption"),
            "long_pdf": write_pdf(docs / "long.pdf", [["word " * 70] * 3] * 6),  # ~6,300 characters
            "long_txt": _write(docs / "long.txt", "All work and no play. " * 200)}


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def _errors(result: dict[str, Any]) -> dict[str, str]:
    return {Path(e["file"]).name: e["error"] for e in result["errors"]}


def _check_errors(errors: dict[str, str]) -> None:
    assert set(errors) == {"filter.pdf", "encrypt.pdf", "long.pdf", "long.txt"}, errors
    assert "cannot read PDF filter.pdf" in errors["filter.pdf"] and "FooDecode" in errors["filter.pdf"]
    assert "cannot read PDF encrypt.pdf" in errors["encrypt.pdf"]
    assert "NotImplementedError" in errors["encrypt.pdf"]
    for name in ("long.pdf", "long.txt"):
        assert f"longer than {CAP:,} characters" in errors[name], errors[name]
        assert "NEORAG_INGEST_MAX_FILE_CHARS" in errors[name]


def _stream(client: TestClient, path: Path) -> list[dict[str, Any]]:
    with client.stream("GET", "/ingest/stream", params={"path": str(path), "refresh": "true"}) as resp:
        assert resp.status_code == 200, resp.read()
        return [json.loads(line.split(":", 1)[1]) for line in resp.iter_lines() if line.startswith("data:")]


def test_bad_files_are_per_file_errors_and_the_rest_is_ingested(settings: Settings, tmp_path: Path) -> None:
    root = tmp_path / "root"
    _folder(root)
    cfg = settings.model_copy(update={"ingest_roots": [root], "ingest_max_file_chars": CAP})
    with app_client(cfg) as client:
        done = client.post("/ingest", json={"path": str(root / "docs")})
        assert done.status_code == 200, done.text
        result = done.json()
        _check_errors(_errors(result))
        assert result["files_failed"] == 4 and result["files_processed"] >= 3, result
        names = {d["name"] for d in client.get("/documents").json()["documents"]}
        assert {"notes.md", "plain.txt", "manual.pdf"} <= names and not names & {"filter.pdf", "long.txt"}
        events = _stream(client, root / "docs")
        _check_errors({Path(e["file"]).name: e["error"] for e in events if e.get("stage") == "file_error"})
        final = [e for e in events if e.get("stage") == "result"]
        assert final and final[0]["result"]["files_failed"] == 4, events[-3:]
        assert client.get("/health").status_code == 200


def test_an_upload_that_cannot_be_ingested_is_removed(settings: Settings, tmp_path: Path) -> None:
    folder = _folder(tmp_path / "made")
    cfg = settings.model_copy(update={"ingest_max_file_chars": CAP})
    uploads = cfg.uploads_dir
    with app_client(cfg) as client:
        for key in ("filter", "encrypt", "long_txt"):
            path = folder[key]
            resp = client.post("/documents", files={"file": (path.name, path.read_bytes())})
            assert resp.status_code == 201, resp.text
            entry = resp.json()["documents"][0]
            assert entry["ingest_error"] and entry["removed"] is True and entry["id"] is None, entry
            assert not [p for p in Path(uploads).rglob(path.name)], "the failed upload was left on disk"
        blank = write_pdf(tmp_path / "blank.pdf", [[]])  # no text at all: nothing to list, so removed too
        empty = client.post("/documents", files={"file": ("blank.pdf", blank.read_bytes())}).json()
        entry = empty["documents"][0]
        assert entry["removed"] is True and entry["id"] is None and "no text" in entry["ingest_error"], entry
        assert not [p for p in Path(uploads).rglob("blank.pdf")]
        good = client.post("/documents", files={"file": ("kept.md", b"# Kept\n\nThe kept memo names Ada.\n")})
        entry = good.json()["documents"][0]
        assert entry["ingest"]["files_processed"] == 1 and entry["removed"] is False, entry
        listed = client.get("/documents").json()["documents"]
        assert [d["name"] for d in listed] == ["kept.md"], listed
        assert [p.name for p in Path(uploads).rglob("*.*") if p.is_file()] == ["kept.md"]


def test_an_upload_stored_first_then_streamed_is_removed_when_it_fails(settings: Settings,
                                                                        tmp_path: Path) -> None:
    """The page's path: POST /documents?ingest=false, then its `stream` URL (GET /ingest/stream): a file that
    fails there is removed too, and the result says so (`upload_removed`); so is one given to POST /ingest."""
    folder = _folder(tmp_path / "made")
    cfg = settings.model_copy(update={"ingest_max_file_chars": CAP})
    with app_client(cfg) as client:
        for key, how in (("filter", "stream"), ("encrypt", "post")):
            path = folder[key]
            stored = client.post("/documents", params={"ingest": "false"},
                                 files={"file": (path.name, path.read_bytes())}).json()["documents"][0]
            source = Path(stored["source"])
            assert source.is_file()
            if how == "stream":
                events = _stream(client, source)
                assert [e for e in events if e.get("stage") == "file_error"], events
                result = [e for e in events if e.get("stage") == "result"][0]["result"]
            else:
                result = client.post("/ingest", json={"path": str(source)}).json()
            assert result["files_failed"] == 1 and result["upload_removed"] is True, result
            assert not source.exists()
        assert client.get("/documents").json()["documents"] == []
