"""Credentials in NEORAG_LLM_BASE_URL never leave the process (issue 25, item 6): a secret planted in the
URL's user info and in a key-like query parameter is searched for in every response and in every log
record, with a working endpoint (diagnostics, answers, streaming, ingest) and with an unreachable one
(the /query warning, the /reason/* 503 hint)."""

from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from app.core.config import Settings
from app.core.redact import MASK, redact_url, scrub, url_secrets
from app.store.embedded import free_port
from tests.support.apps import app_client
from tests.support.fake_openai import ScriptedOpenAI

USER, PASSWORD, KEY = "neorag-user-7f3a", "s3cret-Passw0rd-9c1e", "s3cret-query-key-5b2d"
SECRETS = (USER, PASSWORD, KEY)
FIX = Path(__file__).parent / "fixtures" / "ingest"


def test_redact_url_masks_user_info_and_key_like_parameters() -> None:
    url = f"https://{USER}:{PASSWORD}@llm.example.org:8443/v1?api-version=2024&api_key={KEY}&sig=abc123"
    shown = redact_url(url)
    assert shown == f"https://{MASK}@llm.example.org:8443/v1?api-version=2024&api_key={MASK}&sig={MASK}"
    assert url_secrets(url) >= {USER, PASSWORD, KEY, "abc123"}
    assert redact_url("http://127.0.0.1:8000/v1") == "http://127.0.0.1:8000/v1"  # nothing to hide
    assert redact_url(None) is None
    encoded = f"http://{USER}:p%40ss-word@host/v1"  # a percent-encoded password: both spellings hidden
    assert "p@ss-word" not in scrub(f"failed: p@ss-word and p%40ss-word at {encoded}", encoded)
    assert "p%40ss-word" not in scrub(f"failed at {encoded}", encoded)


def _leaks(text: str) -> list[str]:
    return [s for s in SECRETS if s in text]


def _responses(client: TestClient, root: Path) -> list[str]:
    """Every endpoint that names the LLM or reports its failure; each answer's full text."""
    seen = [client.get("/diagnostics").text, client.get("/health").text]
    seen.append(client.post("/query", json={"question": "Who wrote the notes?"}).text)
    with client.stream("POST", "/query", json={"question": "Who wrote the notes?", "stream": True}) as resp:
        seen.append(resp.read().decode())
    seen.append(client.post("/reason/corag", json={"question": "Who wrote the notes?"}).text)
    seen.append(client.post("/reason/structgpt", json={"question": "Who wrote the notes?",
                                                       "topic_entities": ["Ada"]}).text)
    seen.append(client.post("/ingest", params={"refresh": "true"}, json={"path": str(root)}).text)
    return seen


def _llm_settings(settings: Settings, tmp_path: Path, url: str) -> tuple[Settings, Path]:
    root = tmp_path / "data"
    root.mkdir(exist_ok=True)
    shutil.copy(FIX / "extra.jsonl", root / "extra.jsonl")
    return settings.model_copy(update={
        "llm_base_url": url, "llm_model": "scripted", "llm_max_retries": 0, "llm_timeout_s": 5.0,
        "ingest_entity_mode": "llm", "ingest_roots": [root]}), root


def test_no_response_and_no_log_line_shows_the_llm_credentials(
        settings: Settings, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)  # httpx and openai print request URLs at INFO / DEBUG
    seen: list[str] = []
    with ScriptedOpenAI([], default="Ada Lovelace wrote them [1].") as llm:
        url = llm.base_url.replace("http://", f"http://{USER}:{PASSWORD}@")
        working, root = _llm_settings(settings, tmp_path, url)
        with app_client(working) as client:
            seen += _responses(client, root)
            diagnostics = client.get("/diagnostics").json()
        assert llm.requests, "the endpoint was used (the secret travelled to it, not to the logs)"
    assert diagnostics["llm"]["base_url"].startswith(f"http://{MASK}@127.0.0.1:")
    # an endpoint that refuses connections: its failure is reported (warning, 503 hint) with the URL masked
    down = f"http://{USER}:{PASSWORD}@127.0.0.1:{free_port()}/v1?api_key={KEY}"
    broken, root = _llm_settings(settings, tmp_path, down)
    with app_client(broken) as client:
        answer = client.post("/query", json={"question": "Who wrote the notes?"}).json()
        corag = client.post("/reason/corag", json={"question": "Who wrote the notes?"})
        seen += [json.dumps(answer), corag.text] + _responses(client, root)
    assert any(w["type"] == "llm_unavailable" for w in answer["warnings"]), answer
    assert corag.status_code == 503 and f"{MASK}@127.0.0.1" in corag.json()["hint"], corag.text
    assert f"api_key={MASK}" in corag.json()["hint"]
    for text in seen:
        assert not _leaks(text), text[:500]
    logged = caplog.text + "\n".join(r.getMessage() for r in caplog.records)
    assert "HTTP Request" in logged or "chat/completions" in logged or caplog.records  # the log was captured
    assert not _leaks(logged), [line for line in logged.splitlines() if _leaks(line)][:5]
