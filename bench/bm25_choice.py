"""BM25 backend choice: rank_bm25, the store's full-text index, NeoRAG's sparse BM25; 20k and 100k chunks.

Run: .venv/bin/python bench/bm25_choice.py [--sizes 20000 100000] [--queries 50]
Chunks are real HotpotQA/MuSiQue paragraphs (shared/data) repeated with a per-copy marker word;
queries are the datasets' questions. Reports build time, memory and query latency p50/p95 side by side
(memory: Python heap for rank_bm25, redis used_memory delta for the store, the CSR matrix for sparse BM25).
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.retrieval.text import query_terms, tokenize  # noqa: E402
from app.store.cypher_library import CypherLibrary  # noqa: E402
from app.store.embedded import EmbeddedServer  # noqa: E402
from app.store.falkor import FalkorStore  # noqa: E402

DATA = Path("/work/shared/data")


def load_corpus() -> tuple[list[str], list[str]]:
    """Paragraph texts and questions from the dev data."""
    hp = json.loads((DATA / "hotpotqa-train100/hotpotqa_train_corpus.json").read_text())
    texts = [f"{t}. " + "".join(s) for t, s in hp.items()]
    mq = json.loads((DATA / "musique-train100/musique_train_corpus.json").read_text())
    texts += [f"{p['title']}. {p['text']}" for p in mq]
    qs = [q["question"] for q in json.loads((DATA / "hotpotqa-train100/hotpotqa_train.json").read_text())]
    qs += [q["question"] for q in json.loads((DATA / "musique-train100/musique_train.json").read_text())]
    return texts, qs


def pct(values: list[float], p: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


def synth(texts: list[str], n: int) -> list[str]:
    return [f"{texts[i % len(texts)]} copy{i // len(texts)}" for i in range(n)]


def bench_rank_bm25(docs: list[str], queries: list[str]) -> dict[str, float]:
    from rank_bm25 import BM25Okapi

    gc.collect()
    tracemalloc.start()
    t0 = time.perf_counter()
    index = BM25Okapi([tokenize(d) for d in docs])
    build = time.perf_counter() - t0
    mem = tracemalloc.get_traced_memory()[0] / 2**20
    tracemalloc.stop()
    lat = []
    for q in queries:
        t = time.perf_counter()
        scores = index.get_scores(query_terms(q))
        top = scores.argsort()[::-1][:30]
        _ = [float(scores[i]) for i in top]
        lat.append((time.perf_counter() - t) * 1000)
    return {"build_s": build, "memory_mb": mem, "p50_ms": statistics.median(lat), "p95_ms": pct(lat, 95)}


def bench_sparse(docs: list[str], queries: list[str]) -> dict[str, float]:
    from app.retrieval.bm25 import SparseBM25

    gc.collect()
    t0 = time.perf_counter()
    index = SparseBM25([f"c{i}" for i in range(len(docs))], docs)
    build = time.perf_counter() - t0
    mem = index.memory_bytes() / 2**20
    lat = []
    for q in queries:
        t = time.perf_counter()
        index.search(query_terms(q), 30)
        lat.append((time.perf_counter() - t) * 1000)
    return {"build_s": build, "memory_mb": mem, "p50_ms": statistics.median(lat), "p95_ms": pct(lat, 95)}


def bench_store(store: FalkorStore, docs: list[str], queries: list[str]) -> dict[str, float]:
    store.drop_graph()
    store.run("ddl_02_chunk_id")
    store.run("ddl_90_chunk_fulltext")
    mem0 = int(store._db.connection.info("memory")["used_memory"])  # noqa: SLF001 - bench only
    t0 = time.perf_counter()
    store.run_batched(
        "bench_chunk_text_upsert", [{"id": f"c{i}", "text": d} for i, d in enumerate(docs)], batch_size=2000
    )
    build = time.perf_counter() - t0
    mem = (int(store._db.connection.info("memory")["used_memory"]) - mem0) / 2**20  # noqa: SLF001
    lat = []
    for q in queries:
        t = time.perf_counter()
        store.run("chunk_fulltext_search", {"terms": query_terms(q), "k": 30})
        lat.append((time.perf_counter() - t) * 1000)
    return {"build_s": build, "memory_mb": mem, "p50_ms": statistics.median(lat), "p95_ms": pct(lat, 95)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="+", default=[20000, 100000])
    ap.add_argument("--queries", type=int, default=50)
    args = ap.parse_args()
    texts, qs = load_corpus()
    queries = qs[: args.queries]
    tmp = Path(tempfile.mkdtemp(prefix="bm25bench"))
    server = EmbeddedServer(tmp)
    info = server.start()
    library = CypherLibrary(ROOT / "cypher", "falkordb")
    library_dir = tmp / "cypher"
    (library_dir / "falkordb").mkdir(parents=True)
    for f in (ROOT / "cypher").glob("*.cypher"):
        (library_dir / f.name).write_text(f.read_text())
    for f in (ROOT / "cypher/falkordb").glob("*.cypher"):
        (library_dir / "falkordb" / f.name).write_text(f.read_text())
    (library_dir / "bench_chunk_text_upsert.cypher").write_text(
        "// Bench only: create chunks with text. Params: $rows [{id, text}].\n"
        "UNWIND $rows AS r CREATE (c:Chunk {id: r.id, text: r.text})\n"
    )
    library = CypherLibrary(library_dir, "falkordb")
    store = FalkorStore(library, "127.0.0.1", info.port, "bm25bench")
    rows = []
    try:
        for n in args.sizes:
            docs = synth(texts, n)
            rows.append({"chunks": n, "backend": "rank_bm25 (in-process)", **bench_rank_bm25(docs, queries)})
            rows.append({"chunks": n, "backend": "store full-text", **bench_store(store, docs, queries)})
            rows.append({"chunks": n, "backend": "sparse BM25 (in-process)", **bench_sparse(docs, queries)})
    finally:
        store.drop_graph()
        store.close()
        server.stop()
    print(f"{'chunks':>7} {'backend':<24} {'build s':>8} {'mem MB':>8} {'p50 ms':>8} {'p95 ms':>8}")
    for r in rows:
        print(
            f"{r['chunks']:>7} {r['backend']:<24} {r['build_s']:>8.2f} {r['memory_mb']:>8.1f} "
            f"{r['p50_ms']:>8.2f} {r['p95_ms']:>8.2f}"
        )
    print(json.dumps(rows))


if __name__ == "__main__":
    main()
