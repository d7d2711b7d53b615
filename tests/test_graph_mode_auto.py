"""NEORAG_RETRIEVAL_GRAPH_MODE=auto through the app: a long meeting transcript ingested as one file is ranked
by the `bonus` graph stage, and an explicit setting still wins (issue 24, step 6)."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

from app.services.container import build_services
from bench.qmsum_pool import clean_turn
from tests.support.apps import app_client
from tests.support.backends import Backend

# a QMSum val meeting, cut (the fixtures' README has its source and licence)
MEETING = Path(__file__).parent / "fixtures" / "retrieval" / "qmsum" / "education_10.json"
QUESTION = "What did the committee say about teacher recruitment in Wales?"


def _transcript(tmp_path: Path) -> Path:
    """The meeting's turns as one plain-text file (``Speaker: words`` lines): one document, many chunks."""
    turns = json.loads(MEETING.read_text(encoding="utf-8"))["meeting_transcripts"]
    folder = tmp_path / "transcripts"
    folder.mkdir()
    path = folder / "education_10.txt"
    path.write_text("\n".join(line for t in turns if (line := clean_turn(t))), encoding="utf-8")
    return path


def test_a_transcript_file_is_ranked_by_bonus_and_the_setting_overrides_auto(
    backend: Backend, tmp_path: Path
) -> None:
    from ingest.options import IngestOptions
    from ingest.pipeline import ingest_path

    graph = f"t_auto_{uuid.uuid4().hex[:8]}"
    backend.claim(graph)
    settings = backend.settings(graph)
    services = build_services(settings, start_embedded=False)
    try:
        ingest_path(services, _transcript(tmp_path), IngestOptions(llm_relations=False, checkpoint=False))
        with app_client(settings) as client:
            body = client.post("/ranking/preview", json={"question": QUESTION}).json()
            assert body["graph_mode"] == "bonus" and body["items"], body
            assert all(item["features"] is None for item in body["items"])  # the issue-5 scoring
            corpus = client.get("/diagnostics").json()["retrieval"]["entity_graph"]
            assert corpus["auto_graph_mode"] == "bonus" and corpus["title_links"] == 0.0
            assert corpus["chunks_per_title"] >= 10, corpus
            assert client.get("/diagnostics").json()["retrieval"]["graph_mode"] == "auto"
        with app_client(backend.settings(graph, retrieval_graph_mode="multihop")) as client:
            body = client.post("/ranking/preview", json={"question": QUESTION}).json()
            assert body["graph_mode"] == "multihop"
            assert all(item["features"] is not None for item in body["items"])
        with app_client(backend.settings(graph, retrieval_graph_enabled=False)) as client:
            assert client.post("/ranking/preview", json={"question": QUESTION}).json()["graph_mode"] is None
    finally:
        services.close()
        backend.drop(graph)
