"""Ingest benchmark: end-to-end chunks/s vs the raw embedder on the same chunks, RSS, entity normalisation.

Usage: .venv/bin/python bench/ingest.py /work/shared/data [--backend embedded|neo4j]

Ingests the HotpotQA and MuSiQue corpora (``*_corpus.json``) without an LLM into a fresh store (embedded
FalkorDB, or a local Neo4j started with ``neorag neo4j``'s machinery; temporary data dir), and in the
same run times ``Embedder.encode_raw`` on exactly the
chunks the pipeline produces, at the same encode batch (``ingest_embed_batch_size``). Target:
end-to-end >= 85 % of raw embedder throughput. ``rss_after_mb`` (current RSS after each corpus) shows
whether memory grows with corpus size.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.services.container import build_services  # noqa: E402
from bench.backends import BACKENDS, bench_store  # noqa: E402
from ingest.chunk import chunk_document  # noqa: E402
from ingest.load import load_file  # noqa: E402
from ingest.options import IngestOptions  # noqa: E402
from ingest.pipeline import ingest_path  # noqa: E402

CORPORA = ("hotpotqa-train100/hotpotqa_train_corpus.json", "musique-train100/musique_train_corpus.json")


def rss_mb() -> float:
    """Peak resident set size of this process so far (MiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def rss_now_mb() -> float:
    """Current resident set size of this process (MiB)."""
    return int(Path("/proc/self/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("data", type=Path, help="folder holding hotpotqa-train100/ and musique-train100/")
    parser.add_argument("--out", type=Path, default=None, help="write the JSON report here too")
    parser.add_argument("--backend", choices=BACKENDS, default="embedded")
    args = parser.parse_args()
    files = [args.data / c for c in CORPORA]
    for f in files:
        if not f.is_file():
            sys.exit(f"missing {f}")
    tmp = Path(tempfile.mkdtemp(prefix="neorag-bench-ingest-"))
    with bench_store(args.backend, tmp / "store") as bs:
        settings = bs.settings
        services = build_services(settings, start_embedded=False)
        emb = services.embedder
        emb.encode_raw(["warm up the model"] * 64)
        rss_start = rss_mb()
        report: dict[str, object] = {"backend": args.backend, "machine": f"{os.cpu_count()} cores",
                                     "load_avg": os.getloadavg(),
                                     "ingest_batch": settings.ingest_batch_size,
                                     "encode_batch": settings.ingest_embed_batch_size, "corpora": {}}
        for f in files:
            texts = [c.text for d in load_file(f).docs for c in chunk_document(d, settings.ingest_chunk_size,
                                                                                settings.ingest_chunk_overlap)]
            t0 = time.perf_counter()
            emb.encode_raw(texts, settings.ingest_embed_batch_size)
            raw_s = time.perf_counter() - t0
            del texts
            t0 = time.perf_counter()
            res = ingest_path(services, f, IngestOptions(checkpoint=False))
            e2e_s = time.perf_counter() - t0
            n = res.chunks_new
            entry = {
                "documents": res.documents, "chunks": n,
                "raw_embed_s": round(raw_s, 2), "raw_chunks_per_s": round(n / raw_s, 1),
                "ingest_s": round(e2e_s, 2), "ingest_chunks_per_s": round(n / e2e_s, 1),
                "ratio": round(raw_s / e2e_s, 3),
                "entity_surface_forms": res.entity_surface_forms,
                "entities_after_normalisation": res.entity_keys,
                "cooccur_edges": res.cooccur_edges, "relates_to_edges": res.relates_to_edges,
                "rss_after_mb": round(rss_now_mb(), 1),
            }
            report["corpora"][f.parent.name] = entry  # type: ignore[index]
            print(json.dumps({f.parent.name: entry}), flush=True)
        tot = report["corpora"].values()  # type: ignore[attr-defined]
        raw = sum(e["raw_embed_s"] for e in tot)
        e2e = sum(e["ingest_s"] for e in tot)
        report["overall_ratio"] = round(raw / e2e, 3)
        report["peak_rss_mb"] = round(rss_mb(), 1)
        report["rss_growth_mb"] = round(rss_mb() - rss_start, 1)
        report["graph"] = {r["label"]: r["count"] for r in services.store.run("count_nodes_by_label")}
        print(json.dumps(report, indent=2))
        if args.out:
            args.out.write_text(json.dumps(report, indent=2))
        services.close()


if __name__ == "__main__":
    main()
