"""schemathesis (pinned in pyproject) over EVERY operation of the real app, with all its checks.

The app runs in-process on the session FalkorDB with the real model, a loaded KG dataset, an ingested
corpus, a scripted LLM and API keys set (so the auth checks run too); a bounded number of examples per
operation keeps it to a couple of minutes. Any server error, schema violation, rejected valid request,
accepted invalid request or undocumented status code fails the test.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import schemathesis
from fastapi import FastAPI
from fastapi.testclient import TestClient
from hypothesis import HealthCheck
from hypothesis import settings as hypothesis_settings
from schemathesis.config import SchemathesisConfig

from app.api.main import create_app
from app.core.config import Settings
from app.services.container import build_services
from app.store.embedded import ServerInfo
from tests.browser.server import live_server
from tests.conftest import FIXTURES
from tests.support.backends import FalkorBackend
from tests.support.fake_openai import ScriptedOpenAI
from tests.support.kg import kg_settings, loaded_store

READ_KEY = "schemathesis-read-key-0001"
WRITE_KEY = "schemathesis-write-key-0001"
KEYS = f"read:{READ_KEY},write:{WRITE_KEY}"
EXAMPLES = int(os.environ.get("NEORAG_TEST_SCHEMATHESIS_EXAMPLES", "12"))  # raise it for a deeper run


def _llm(body: dict[str, Any]) -> str:
    """Any answer will do: the reasoning endpoints only need an LLM that replies."""
    return "Final answer: Jamaica"


@pytest.fixture(scope="module")
def api_app(falkor_server: ServerInfo, tmp_path_factory: pytest.TempPathFactory) -> Iterator[FastAPI]:
    root = tmp_path_factory.mktemp("schemathesis_roots")
    shutil.copytree(FIXTURES / "ui" / "corpus", root / "corpus")
    with ScriptedOpenAI(default=_llm) as llm:
        falkor = FalkorBackend(falkor_server)
        settings: Settings = kg_settings(falkor).model_copy(update={
            "ingest_roots": [root], "llm_base_url": llm.base_url, "llm_max_retries": 0,
            "api_keys": KEYS, "allowed_hosts": ["testserver"],
            "uploads_dir": tmp_path_factory.mktemp("schemathesis_uploads")})
        with loaded_store(falkor, settings, pq=False):
            app = create_app(settings, services_factory=lambda s: build_services(s, start_embedded=False))
            with TestClient(app, base_url="http://127.0.0.1") as client:  # runs the lifespan (services)
                done = client.post("/ingest", json={"path": str(root / "corpus")},
                                   headers={"X-API-Key": WRITE_KEY})
                assert done.status_code == 200, done.text
                yield app


POSITIVE = ["2xx", "3xx", "401", "403", "404", "409", "429", "5xx"]  # schemathesis' default
# What OpenAPI cannot say, so a schema-valid request may still be refused with these (and only here):
UNSAYABLE = [
    ("/graph", "GET", ["422"], "an entry point among optional parameters (none, or half a sample: 422)"),
    ("/documents", "POST", ["415", "422"], "the file type comes from the part's file name (415); an empty "
                                           "file is 422: multipart binary parts carry neither in a schema"),
]


def _accepting(path: str, method: str, statuses: list[str]) -> dict[str, Any]:
    return {"include-path": path, "include-method": method,
            "checks": {"positive_data_acceptance": {"expected-statuses": POSITIVE + statuses}}}


def _schema() -> Any:
    """The served document, loaded at collection from an app with the same limits and keys (the calls go to
    the fixture's app, which has the same document; building an app starts nothing)."""
    config = SchemathesisConfig.from_dict({
        "auth": {"openapi": {"ApiKeyHeader": {"api_key": WRITE_KEY}}},
        "checks": {"negative_data_rejection": {"expected-statuses": [
            "400", "401", "403", "404", "405", "406", "409", "413", "415", "422"]}},
        "operations": [_accepting(path, method, statuses) for path, method, statuses, _why in UNSAYABLE],
    })
    template = create_app(Settings(_env_file=None, api_keys=KEYS, allowed_hosts=["testserver"],  # type: ignore[call-arg]
                                   llm_base_url="http://127.0.0.1:9/v1"))
    loaded = schemathesis.openapi.from_asgi("/openapi.json", template, config=config)
    loaded.config.generation.update(max_examples=EXAMPLES)
    return loaded


schema = _schema()


@schema.parametrize()
@hypothesis_settings(deadline=None, max_examples=EXAMPLES, suppress_health_check=list(HealthCheck),
                     database=None)
def test_every_operation_conforms_to_its_openapi(case: Any, api_app: FastAPI) -> None:
    case.call_and_validate(app=api_app)


ST = str(Path(sys.executable).parent / "st")
CLI_CONFIG = Path(__file__).parent / "schemathesis.toml"


def test_the_schemathesis_cli_run_of_the_attack_passes(falkor_server: ServerInfo, tmp_path: Path) -> None:
    """The run of issue 25, as a user runs it: `st run --checks all --max-examples 15 --seed 7` against a
    live server (uvicorn, the protocol `neorag serve` uses) with 100 ingested records and no LLM, no keys.
    tests/schemathesis.toml allows only what the design answers on purpose (503 without an LLM, 415 for a
    file type ingest cannot read, 422 for /graph without an entry point), each with its reason."""
    root = tmp_path / "data"
    root.mkdir()
    lines = [json.dumps({"title": f"Record {i}",
                         "text": f"Record {i} says that town {i} has a mill on river {i % 7}, built by guild "
                                 f"{i % 5}."}) for i in range(100)]
    (root / "records.jsonl").write_text("\n".join(lines) + "\n")
    settings = FalkorBackend(falkor_server).settings(
        "schemathesis_cli", llm_base_url=None, ingest_roots=[root], data_dir=tmp_path / ".neorag",
        uploads_dir=tmp_path / "uploads")
    with live_server(settings) as live:
        done = httpx.post(f"{live.url}/ingest", json={"path": str(root)}, timeout=300)
        assert done.status_code == 200 and done.json()["chunks_new"] == 100, done.text
        run = subprocess.run([ST, "--config-file", str(CLI_CONFIG), "run", f"{live.url}/openapi.json",
                              "--checks", "all", "--max-examples", "15", "--seed", "7", "--no-color",
                              "--workers", "1"], capture_output=True, text=True, timeout=900, check=False,
                             cwd=tmp_path)  # its .schemathesis/ cache stays in the temp dir
    out = run.stdout + run.stderr
    assert run.returncode == 0, out[-6000:]
    assert " passed" in out and "failures" not in out.split("SUMMARY")[-1], out[-3000:]
