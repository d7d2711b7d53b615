"""Documents: what issue 16 adds to an ingest's time, and how long DELETE /documents/{id} takes.

Run: .venv/bin/python bench/documents.py [--files 10] [--deletes 3]

The HotpotQA dev corpus (994 paragraphs, /work/shared/data) is split into ``--files`` JSONL files and
ingested (no LLM) into a fresh graph on a fresh embedded FalkorDB; every named statement's time is
summed (a wrapper around ``GraphStore.run``), so the new statements (``ingest_entity_names``,
``document_source*``, ``chunk_set_locations``) are compared with the ingest's total and with the
existing ``ingest_entity_freq``. Then ``--deletes`` files are deleted one by one (the same code as
``DELETE /documents/{id}``), and finally an incremental no-op ingest shows what the per-file content hash
check costs. Nothing here is used by tests.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from app.core.config import Settings  # noqa: E402
from app.documents.delete import delete_document  # noqa: E402
from app.services.container import build_services  # noqa: E402
from app.store.base import GraphStore  # noqa: E402
from app.store.embedded import EmbeddedServer  # noqa: E402
from ingest.options import IngestOptions  # noqa: E402
from ingest.pipeline import ingest_path  # noqa: E402
from ingest.sources import source_id  # noqa: E402

DATA = Path("/work/shared/data/hotpotqa-train100/hotpotqa_train_corpus.json")
NEW = ("ingest_entity_names", "document_source_upsert", "document_source_prune", "document_sources_by_ids",
       "chunk_set_locations")


class Timings:
    """Seconds per statement name, collected by wrapping ``GraphStore.run``."""

    def __init__(self) -> None:
        self.by_name: dict[str, float] = defaultdict(float)
        self._orig = GraphStore.run

        def run(store: GraphStore, name: str, params: dict[str, Any] | None = None) -> Any:
            t = time.perf_counter()
            try:
                return self._orig(store, name, params)
            finally:
                self.by_name[name] += time.perf_counter() - t

        GraphStore.run = run  # type: ignore[method-assign]

    def take(self) -> dict[str, float]:
        out = {k: round(v, 3) for k, v in sorted(self.by_name.items(), key=lambda kv: -kv[1])}
        self.by_name.clear()
        return out


def split_corpus(folder: Path, files: int) -> list[Path]:
    corpus = json.loads(DATA.read_text(encoding="utf-8"))
    items = list(corpus.items())
    paths = []
    for k in range(files):
        path = folder / f"part-{k:02d}.jsonl"
        lines = [json.dumps({"title": t, "text": "".join(s)}) for t, s in items[k::files]]
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        paths.append(path)
    return paths


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=10)
    parser.add_argument("--deletes", type=int, default=3)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="neorag-docs-bench-"))
    folder = tmp / "corpus"
    folder.mkdir()
    paths = split_corpus(folder, args.files)
    server = EmbeddedServer(tmp / "db")
    info = server.start()
    timings = Timings()
    report: dict[str, Any] = {"load_before": os.getloadavg()}
    try:
        settings = Settings(backend="embedded", falkor_data_dir=info.data_dir, falkor_port=info.port,
                            graph_name="docs_bench", llm_base_url=None)
        services = build_services(settings, start_embedded=False)
        options = IngestOptions(llm_relations=False, checkpoint=False)
        t = time.perf_counter()
        result = ingest_path(services, folder, options)
        stmts = timings.take()
        report["ingest"] = {"seconds": round(time.perf_counter() - t, 2), "chunks": result.chunks_total,
                            "entities": result.entity_keys, "statements_s": stmts,
                            "new_statements_s": round(sum(stmts.get(n, 0.0) for n in NEW), 3)}
        print("ingest", json.dumps(report["ingest"]), flush=True)
        deletes = []
        for path in paths[: args.deletes]:
            t = time.perf_counter()
            out = delete_document(services, source_id(str(path.resolve())))
            deletes.append({"seconds": round(time.perf_counter() - t, 3), "chunks": out["chunks_deleted"],
                            "entities_removed": out["entities_removed"],
                            "entities_updated": out["entities_updated"], "statements_s": timings.take()})
            print("delete", json.dumps(deletes[-1]), flush=True)
        report["deletes"] = deletes
        t = time.perf_counter()
        again = ingest_path(services, folder, IngestOptions(llm_relations=False, checkpoint=False,
                                                           incremental=True))
        report["incremental_reingest"] = {"seconds": round(time.perf_counter() - t, 2),
                                          "chunks_new": again.chunks_new, "skipped": again.chunks_skipped,
                                          "statements_s": timings.take()}
        print("incremental", json.dumps(report["incremental_reingest"]), flush=True)
        services.close()
    finally:
        server.stop()
    report["load_after"] = os.getloadavg()
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
