"""A small HotpotQA slice ingested (no LLM) into its own graph, shared by the retrieval/query tests."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from app.core.config import Settings
from app.services.container import Services, build_services
from tests.support.backends import Backend

FIXTURE_DIR = Path(__file__).resolve().parents[1] / "fixtures" / "retrieval"
CORPUS = FIXTURE_DIR / "hotpot_corpus.json"
QUESTIONS = json.loads((FIXTURE_DIR / "hotpot_questions.json").read_text(encoding="utf-8"))


def base_settings(backend: Backend, graph: str, **update: object) -> Settings:
    return backend.settings(graph, **update)


@contextmanager
def ingested_graph(request: pytest.FixtureRequest, backend: Backend) -> Iterator[tuple[Settings, Services]]:
    """Settings and services over a graph holding the fixture corpus, for a module fixture (built once,
    rebuilt when another test took the database; dropped afterwards)."""
    from ingest.options import IngestOptions
    from ingest.pipeline import ingest_path

    settings = base_settings(backend, f"t_retr_{uuid.uuid4().hex[:10]}")
    backend.claim(settings.graph_name)
    services = build_services(settings, start_embedded=False)
    try:
        with backend.shared_graph(request, settings, lambda: ingest_path(
                services, CORPUS, IngestOptions(llm_relations=False, checkpoint=False))):
            yield settings, services
    finally:
        services.close()
