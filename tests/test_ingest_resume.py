"""Crash safety for real: an ingest subprocess is killed with SIGKILL mid-way; a re-run equals a clean run."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from ingest.checkpoint import checkpoint_path
from ingest.options import IngestOptions
from ingest.pipeline import ingest_path
from tests.support.ingest_graph import assert_invariants, counts, make_services

FIX = Path(__file__).parent / "fixtures" / "ingest"
REPO = Path(__file__).resolve().parents[1]

CHILD = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from app.core.config import Settings
    from app.services.container import Services
    from app.services.embedder_choice import shared_embedder
    from app.store.factory import make_store
    from ingest.options import IngestOptions
    from ingest.pipeline import ingest_path

    corpus = Path(sys.argv[1])
    settings = Settings()  # the parent's store and graph, from NEORAG_* variables
    store = make_store(settings)
    services = Services(settings, store, shared_embedder(), None)

    def slow(ev):  # give the parent time to kill us between batches
        if ev["stage"] == "entity_extraction":
            print("batch", ev["current"], flush=True)
            time.sleep(0.4)

    ingest_path(services, corpus, IngestOptions(batch_size=4, chunk_size=300, chunk_overlap=60), slow)
    print("finished", flush=True)
""")


def test_kill_9_then_resume_equals_clean_run(settings, store, embedder, backend,  # type: ignore[no-untyped-def]
                                             tmp_path) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for name in ("notes.txt", "musique_corpus.json", "extra.jsonl"):
        shutil.copy(FIX / name, corpus / name)
    ck_file = checkpoint_path(corpus.resolve(), settings.checkpoint_dir(), tmp_path)  # in the data dir
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("NEORAG_")}, **backend.env(settings),
           "NEORAG_DATA_DIR": str(settings.data_dir),
           "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    argv = [sys.executable, "-c", CHILD, str(corpus)]
    child = subprocess.Popen(argv, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             text=True)
    killed_at = None
    try:
        deadline = time.monotonic() + 120
        assert child.stdout is not None
        for line in child.stdout:
            if line.startswith("batch") and int(line.split()[1]) >= 12 and ck_file.is_file():
                os.kill(child.pid, signal.SIGKILL)
                killed_at = int(line.split()[1])
                break
            assert time.monotonic() < deadline, "child too slow"
    finally:
        child.kill()
        child.wait()
    assert killed_at is not None and child.returncode == -signal.SIGKILL
    ck = json.loads(ck_file.read_text())
    assert ck["complete"] is False and 0 < len(ck["chunks"])
    partial = counts(store)
    opts = IngestOptions(batch_size=4, chunk_size=300, chunk_overlap=60)
    services = make_services(settings, store, embedder)
    resumed = ingest_path(services, corpus, opts)
    assert resumed.chunks_skipped >= len(ck["chunks"]) and resumed.chunks_new > 0
    assert partial["node:Chunk"] < resumed.chunks_total
    assert json.loads(ck_file.read_text())["complete"] is True
    assert_invariants(store)
    after_resume = counts(store)
    clean_settings = backend.settings(settings.graph_name + "_clean")  # Neo4j: one database, so after
    backend.claim(clean_settings.graph_name)
    clean_store = backend.open_store(clean_settings)
    try:
        clean = ingest_path(make_services(clean_settings, clean_store, embedder), corpus,
                            IngestOptions(batch_size=4, chunk_size=300, chunk_overlap=60, checkpoint=False))
        assert clean.chunks_total == resumed.chunks_total
        assert counts(clean_store) == after_resume
    finally:
        backend.drop(clean_settings.graph_name)
        clean_store.close()
