"""Shared setup for the reasoning tests: graphs loaded once per module with the real loaders."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient

from app.core.config import Settings
from tests.support.apps import app_client
from tests.support.backends import Backend

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "reasoning"
HOTPOT = FIX / "hotpotqa_eval.json"
PQ_QUESTIONS = FIX / "pq2h_questions.txt"
PQ_KB = FIX / "pq2h_kb.txt"
CORAG_QUESTION = "If Gallu is a demon Lilu is what?"


def prompt(body: dict[str, Any]) -> str:
    """The last message of a chat-completion request the scripted LLM received."""
    return str(body["messages"][-1]["content"])


def corag_call(body: dict[str, Any]) -> str:
    """Which CoRAG prompt a request is: subquery, final, score (of CORAG_QUESTION) or subanswer."""
    p = prompt(body)
    if p.startswith("You are using a search engine"):
        return "subquery"
    if "## Intermediate queries and answers" in p:
        return "final"
    if "Q: " in p and f"## Query\n{CORAG_QUESTION}" in p:
        return "score"
    return "subanswer"


def module_settings(backend: Backend, graph: str) -> Settings:
    """Settings on the test's backend and a module-owned graph, no LLM."""
    return backend.settings(graph)


def with_llm(settings: Settings, base_url: str, timeout_s: float = 10.0) -> Settings:
    """The same settings with the scripted LLM (no client retries, so failures surface at once)."""
    return settings.model_copy(
        update={"llm_base_url": base_url, "llm_timeout_s": timeout_s, "llm_max_retries": 0}
    )


@contextmanager
def store_down_client(backend: Backend, settings: Settings) -> Iterator[TestClient]:
    """A client over the real app whose store goes down once the app has started (the module's graph
    is kept: only the connection is cut)."""
    data = Path(tempfile.mkdtemp(prefix="neorag-down-"))
    with backend.stoppable(data, settings, keep_data=True) as (switch, down), app_client(down) as client:
        switch.stop()
        yield client
