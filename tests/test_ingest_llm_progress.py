"""LLM ingest progress per chunk where users see it: GET /ingest/stream (SSE, one ``llm_extraction`` event
per chunk, cache hits marked on a re-ingest, a failing endpoint named per chunk) and `neorag ingest` (a
progress line and the counts), against the scripted endpoint."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from app.cli import cli
from app.core.config import Settings
from tests.support.apps import app_client
from tests.support.backends import Backend
from tests.support.fake_openai import ScriptedOpenAI

FIX = Path(__file__).parent / "fixtures" / "ingest"


def reply(body: dict[str, Any]) -> str:
    """Entities for an entity request, no relations for anything else."""
    if str(body["messages"][0]["content"]).startswith("Extract the named entities"):
        return json.dumps({"entities": [{"name": "Ada Lovelace", "type": "PERSON"}]})
    return '{"relations": []}'


def _llm_settings(settings: Settings, tmp_path: Path, url: str) -> Settings:
    root = tmp_path / "data"
    root.mkdir()
    shutil.copy(FIX / "extra.jsonl", root / "extra.jsonl")
    return settings.model_copy(update={
        "llm_base_url": url, "llm_model": "scripted", "llm_max_retries": 0, "llm_timeout_s": 5.0,
        "ingest_entity_mode": "llm", "ingest_llm_relations": "on", "ingest_roots": [root],
        "llm_cache_enabled": True, "llm_cache_path": tmp_path / "cache.sqlite3"})


def _sse(client: TestClient, path: Path) -> list[dict[str, Any]]:
    events = []
    with client.stream("GET", "/ingest/stream", params={"path": str(path), "refresh": "true"}) as resp:
        assert resp.status_code == 200, resp.read()
        for line in resp.iter_lines():
            if line.startswith("data:"):
                events.append(json.loads(line.split(":", 1)[1]))
    return events


def test_ingest_stream_reports_each_chunk_and_the_cache(settings: Settings, tmp_path: Path) -> None:
    with ScriptedOpenAI([], default=reply) as llm:
        s = _llm_settings(settings, tmp_path, llm.base_url)
        path = tmp_path / "data" / "extra.jsonl"
        with app_client(s) as client:
            first = _sse(client, path)
            progress = [e for e in first if e.get("stage") == "llm_extraction"]
            total = progress[0]["total"]
            assert total >= 2 and [e["current"] for e in progress] == list(range(1, total + 1))
            assert len({e["chunk"] for e in progress}) == total
            assert not any(e["cached"] for e in progress) and all(e["entities"] >= 1 for e in progress)
            asked = len(llm.requests)
            # a refresh re-extracts every chunk: from the cache
            again = [e for e in _sse(client, path) if e.get("stage") == "llm_extraction"]
            assert again and all(e["cached"] for e in again)
            assert len(llm.requests) == asked  # the cache answered: no model call
            result = [e for e in _sse(client, path) if e.get("stage") == "result"][0]["result"]
            assert result["llm_cache_hits"] >= total


def test_ingest_stream_names_the_failing_endpoint_per_chunk(settings: Settings, tmp_path: Path) -> None:
    with ScriptedOpenAI([], default={"status": 500}) as llm:
        s = _llm_settings(settings, tmp_path, llm.base_url)
        with app_client(s) as client:
            events = _sse(client, tmp_path / "data" / "extra.jsonl")
    progress = [e for e in events if e.get("stage") == "llm_extraction"]
    assert progress and all("error" in e for e in progress)  # every chunk accounted for, none lost
    result = [e for e in events if e.get("stage") == "result"][0]["result"]
    assert result["llm_entity_errors"] >= 1 and result["chunks_total"] >= len(progress)


def test_cli_ingest_shows_llm_progress(settings: Settings, backend: Backend, tmp_path: Path,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    with ScriptedOpenAI([], default=reply) as llm:
        s = _llm_settings(settings, tmp_path, llm.base_url)
        env = {**backend.env(s), "NEORAG_LLM_BASE_URL": llm.base_url, "NEORAG_LLM_MODEL": "scripted",
               "NEORAG_LLM_MAX_RETRIES": "0", "NEORAG_INGEST_ENTITY_MODE": "llm",
               "NEORAG_LLM_CACHE_PATH": str(tmp_path / "cli-cache.sqlite3")}
        for key, value in env.items():
            monkeypatch.setenv(key, value)
        src = str(tmp_path / "data" / "extra.jsonl")
        result = CliRunner().invoke(cli, ["ingest", src, "--no-checkpoint"])
        assert result.exit_code == 0, result.output
        assert "llm chunks" in result.output
        assert any("Extract the named entities" in str(r["messages"][0]["content"]) for r in llm.requests)
        bad = CliRunner().invoke(cli, ["ingest", str(tmp_path / "missing.txt")])
        assert bad.exit_code != 0 and "missing.txt does not exist" in str(bad.exception)
