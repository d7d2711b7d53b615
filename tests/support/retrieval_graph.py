"""A small HotpotQA slice ingested (no LLM) into its own graph, shared by the retrieval/query tests."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from app.core.config import Settings
from app.services.container import Services, build_services
from app.store.embedded import ServerInfo

FIXTURE_DIR = Path(__file__).resolve().parents[1] / "fixtures" / "retrieval"
CORPUS = FIXTURE_DIR / "hotpot_corpus.json"
QUESTIONS = json.loads((FIXTURE_DIR / "hotpot_questions.json").read_text(encoding="utf-8"))


def base_settings(server: ServerInfo, graph: str, **update: object) -> Settings:
    base = Settings(
        backend="embedded",
        falkor_data_dir=server.data_dir,
        falkor_port=server.port,
        graph_name=graph,
        llm_base_url=None,
    )
    return base.model_copy(update=update)


@contextmanager
def ingested_graph(server: ServerInfo) -> Iterator[tuple[Settings, Services]]:
    """Settings and services over a fresh graph holding the fixture corpus (dropped afterwards)."""
    from ingest.options import IngestOptions
    from ingest.pipeline import ingest_path

    settings = base_settings(server, f"t_retr_{uuid.uuid4().hex[:10]}")
    services = build_services(settings, start_embedded=False)
    try:
        ingest_path(services, CORPUS, IngestOptions(llm_relations=False, checkpoint=False))
        yield settings, services
    finally:
        services.store.drop_graph()  # type: ignore[attr-defined]
        services.close()
