"""Benchmark: how long the embedded FalkorDB takes to answer again after kill -9, with its AOF as NeoRAG keeps
it (rewritten as a snapshot after an ingest job, app/store/aof.py) and with every write left in the AOF.

Writes ``--chunks`` Chunk nodes (text, 384-dim embeddings, one Document per 100 chunks) through NeoRAG's own
statements into a fresh store, then per variant: SIGKILL the server, start it again on the same data dir and
time until a count query answers (what the supervisor's restart waits for). With vectors searched in process
(``NEORAG_RETRIEVAL_VECTOR_BACKEND=memory``, the default: no FalkorDB vector index) it also times the
in-process index's build from the recovered store (vector search ready again).

    .venv/bin/python bench/aof_recovery.py [--chunks 100000] [--compacted-only] \
        [--vector-backends memory,store] [--without fulltext]

``--vector-backends``: the compacted store as NeoRAG keeps it per vector backend (``store``: FalkorDB's own
HNSW index, rebuilt at every load). ``--without``: also time the compacted store with the full-text index
dropped before the kill (how much of the recovery is FalkorDB rebuilding it at load).
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import signal
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import redis  # noqa: E402

from app.core.config import Settings  # noqa: E402
from app.retrieval.vectors import VectorIndex  # noqa: E402
from app.store.aof import aof_growth, compact_if_grown, rewriting  # noqa: E402
from app.store.embedded import EmbeddedServer, free_port  # noqa: E402
from app.store.factory import make_store  # noqa: E402

DIM = 384


def bench_settings(server: EmbeddedServer, vector_backend: str) -> Settings:
    info = server.start()
    return Settings(backend="embedded", falkor_data_dir=info.data_dir, falkor_port=info.port,
                    graph_name="bench", llm_base_url=None, retrieval_vector_backend=vector_backend)


def write_chunks(server: EmbeddedServer, n: int, vector_backend: str = "memory") -> None:
    store = make_store(bench_settings(server, vector_backend), server.start())
    try:
        store.bootstrap(DIM)
        rng = random.Random(5)
        for start in range(0, n, 1000):
            ids = range(start, min(n, start + 1000))
            docs = sorted({i // 100 for i in ids})
            store.run("document_upsert", {"rows": [
                {"id": f"d{d}", "title": f"Doc {d}", "source": f"/b/{d}.txt", "props": {}} for d in docs]})
            store.run("chunk_upsert", {"rows": [{
                "id": f"c{i}", "doc_id": f"d{i // 100}", "text": f"chunk {i} " + "lorem ipsum " * 60,
                "hash": f"h{i}", "source": f"/b/{i // 100}.txt", "seq": i % 100, "title": f"Doc {i // 100}",
                "pos": i % 100, "section": None, "page": None, "page_end": None, "line_start": None,
                "line_end": None, "record": None, "paragraph": None} for i in ids]})
            store.run("chunk_set_embeddings", {"rows": [
                {"id": f"c{i}", "embedding": [rng.uniform(-1, 1) for _ in range(DIM)]} for i in ids]})
    finally:
        store.close()


def aof_mb(conn: redis.Redis) -> float:
    return int(conn.info("persistence").get("aof_current_size", 0)) / 1e6


def recover(server: EmbeddedServer) -> float:
    """SIGKILL the server, start it again, seconds until a graph query answers."""
    info = server.start()
    os.kill(info.pid, signal.SIGKILL)
    while True:
        try:
            os.kill(info.pid, 0)
            time.sleep(0.05)
        except ProcessLookupError:
            break
        try:
            os.waitpid(info.pid, os.WNOHANG)
        except ChildProcessError:
            pass
    t0 = time.perf_counter()
    info = server.start()
    conn = redis.Redis(host=info.host, port=info.port)
    while True:
        try:
            conn.execute_command("GRAPH.QUERY", "bench", "MATCH (c:Chunk) RETURN count(c)")
            return time.perf_counter() - t0
        except redis.exceptions.BusyLoadingError:
            time.sleep(0.05)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--compacted-only", action="store_true",
                        help="skip the every-write variant (at 100k chunks its replay ran past 8 minutes)")
    parser.add_argument("--vector-backends", default="memory,store",
                        help="compacted variants per NEORAG_RETRIEVAL_VECTOR_BACKEND, comma-separated")
    parser.add_argument("--without", default="",
                        help="extra compacted variants (default vector backend), comma-separated: fulltext")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="aof-recovery-"))
    print(f"load average before {os.getloadavg()[0]:.2f}", flush=True)
    try:
        variants = [("every write in the AOF", "memory")] if not args.compacted_only else []
        variants += [(f"vectors {b}: rewritten after the job", b)
                     for b in args.vector_backends.split(",") if b]
        variants += [(f"without {w} index: rewritten after the job", "memory")
                     for w in args.without.split(",") if w]
        for n, (variant, backend) in enumerate(variants):
            server = EmbeddedServer(work / f"v{n}", port=free_port())
            info = server.start()
            conn = redis.Redis(host=info.host, port=info.port)
            if variant.startswith("every"):
                conn.config_set("auto-aof-rewrite-percentage", 0)  # no rewrite at all: the old worst case
            t0 = time.perf_counter()
            write_chunks(server, args.chunks, backend)
            wrote = time.perf_counter() - t0
            if variant.startswith("without fulltext"):
                conn.execute_command("GRAPH.QUERY", "bench", "CALL db.idx.fulltext.drop('Chunk')")
            if not variant.startswith("every"):
                compact_if_grown(info.host, info.port, 16 * 2**20)  # what the job registry does
                time.sleep(1)
                while rewriting(conn) or aof_growth(conn) > 16 * 2**20:  # incl. its re-check thread
                    time.sleep(0.2)
            size = aof_mb(conn)
            seconds = recover(server)
            ready = ""
            if backend == "memory":
                store = make_store(bench_settings(server, backend), server.start())
                t1 = time.perf_counter()
                built = VectorIndex(store).build()
                ready = (f"; in-process vector index of {len(built):,} chunks built "
                         f"{time.perf_counter() - t1:.2f} s later")
                store.close()
            print(f"{args.chunks:,} chunks ({variant}): written in {wrote:.0f} s, AOF {size:,.1f} MB, "
                  f"answers again {seconds:.2f} s after kill -9{ready}", flush=True)
            server.stop(compact_wait_s=0)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"load average after {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
