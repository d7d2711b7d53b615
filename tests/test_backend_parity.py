"""One behaviour, two backends: the same corpus and questions give the same top-5 sources (and scores) on
the embedded FalkorDB and on Neo4j, for hybrid retrieval (/query, /ranking/preview) and CoRAG passages."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from app.retrieval.hybrid import retrieve
from app.retrieval.passages import retrieve_passages
from app.services.container import build_services
from app.store.embedded import ServerInfo
from ingest.options import IngestOptions
from ingest.pipeline import ingest_path
from tests.support.backends import Backend, FalkorBackend
from tests.support.retrieval_graph import CORPUS, QUESTIONS

EXTRA = ["Who directed Maximum Overdrive?", "Which river flows through Leland, North Carolina?",
         "Akkadian demons and spirits", "Christopher Nolan films"]


def top5(backend: Backend) -> dict[str, Any]:
    """Ingest the fixture corpus into a fresh graph of ``backend``; the top-5 of every question."""
    settings = backend.settings(f"t_parity_{uuid.uuid4().hex[:8]}")
    backend.claim(settings.graph_name)
    services = build_services(settings, start_embedded=False)
    try:
        ingest_path(services, CORPUS, IngestOptions(llm_relations=False, checkpoint=False))
        out: dict[str, Any] = {}
        for question in [q["question"] for q in QUESTIONS] + EXTRA:
            result = retrieve(services, question)
            out[question] = [(c.id, c.reason, round(c.final, 4)) for c in result.top[:5]]
            out["passages: " + question] = [p["id"] for p in retrieve_passages(services, question, 5)]
        return out
    finally:
        services.close()
        backend.drop(settings.graph_name)


@pytest.mark.backends("neo4j")  # runs with the Neo4j half; the FalkorDB side is built here too
def test_same_top5_sources_and_scores_on_both_backends(backend: Backend, falkor_server: ServerInfo) -> None:
    falkor, neo = top5(FalkorBackend(falkor_server)), top5(backend)
    assert falkor.keys() == neo.keys()
    for question, expected in falkor.items():
        assert neo[question] == expected, question
    assert all(len(v) == 5 for v in falkor.values())
