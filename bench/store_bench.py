"""Embedded-store benchmark: triple MERGE throughput, 384-d vector writes, 64-key batched lookups.

Runs on a fresh embedded FalkorDB (its own data dir in a temp dir, schema v1 bootstrapped first, so
every MERGE goes through the range indexes). Prints a table with the issue's targets.

    .venv/bin/python bench/store_bench.py [--triples 100000] [--vectors 5000] [--runs 300]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from app.core.config import REPO_ROOT
from app.store.cypher_library import CypherLibrary
from app.store.embedded import EmbeddedServer
from app.store.falkor import FalkorStore

DIM = 384
TRIPLE_TARGET = 50_000.0  # triple MERGEs per second
LOOKUP_P50_TARGET_MS = 3.0


Rows = list[dict[str, Any]]


def triples_workload(n_triples: int, n_entities: int, n_relations: int, seed: int) -> tuple[Rows, Rows]:
    """Distinct (h, r, t) rows over ``n_entities`` keys and the entity rows they need."""
    rng = random.Random(seed)
    entities = [{"key": f"bench/e{i}", "lkey": f"bench/e{i}", "name": f"e{i}"} for i in range(n_entities)]
    seen: set[tuple[int, int, int]] = set()
    while len(seen) < n_triples:
        seen.add((rng.randrange(n_entities), rng.randrange(n_relations), rng.randrange(n_entities)))
    rows = [{"h": f"bench/e{h}", "r": f"rel_{r}", "t": f"bench/e{t}", "n": 1} for h, r, t in seen]
    return entities, rows


def timed(fn: Any) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def bench(args: argparse.Namespace) -> list[tuple[str, str, str, str]]:
    """Run every measurement; rows of (measure, result, target, verdict)."""
    out: list[tuple[str, str, str, str]] = []
    with tempfile.TemporaryDirectory(prefix="neorag-bench-") as tmp:
        server = EmbeddedServer(Path(tmp) / "falkordb")
        info = server.start()
        store = FalkorStore(CypherLibrary(REPO_ROOT / "cypher", "falkordb"), "127.0.0.1", info.port, "bench",
                            batch_size=args.batch_size, timeout_s=300)
        try:
            store.bootstrap(DIM)

            # (a) triple MERGE throughput: entities by key, then relationships, indexes in place
            entities, triples = triples_workload(args.triples, args.entities, args.relations, args.seed)
            t_ent = timed(lambda: store.run_batched("kg_entity_merge", entities, extra={"dataset": "bench"}))
            t_rel = timed(lambda: store.run_batched("kg_rel_merge", triples, extra={"dataset": "bench"}))
            rate = len(triples) / (t_ent + t_rel)
            out.append((f"triple MERGE ({len(triples):,} triples, {len(entities):,} entities, "
                        f"batch {args.batch_size})", f"{rate:,.0f} triples/s "
                        f"(entities {t_ent:.2f}s + rels {t_rel:.2f}s)", f">= {TRIPLE_TARGET:,.0f}/s",
                        "met" if rate >= TRIPLE_TARGET else "MISSED"))
            t_again = timed(lambda: store.run_batched("kg_rel_merge", triples, extra={"dataset": "bench"}))
            out.append(("same triples again (MERGE finds them)", f"{len(triples) / t_again:,.0f} triples/s",
                        "-", "-"))

            # (b) chunk rows with 384-d vectors (the vector index in place)
            rng = random.Random(args.seed)
            store.run_batched("document_upsert", [{"id": "bench-doc", "title": "bench", "source": "bench",
                                                   "props": {}}])
            chunks = [{"id": f"c{i}", "doc_id": "bench-doc", "text": f"chunk {i}", "hash": str(i),
                       "source": "bench", "seq": i} for i in range(args.vectors)]
            vectors = [{"id": f"c{i}", "embedding": [rng.uniform(-1, 1) for _ in range(DIM)]}
                       for i in range(args.vectors)]
            t_chunks = timed(lambda: store.run_batched("chunk_upsert", chunks))
            t_vecs = timed(lambda: store.run_batched("chunk_set_embeddings", vectors,
                                                     batch_size=args.vector_batch_size))
            out.append((f"chunk upsert ({args.vectors:,} rows)", f"{args.vectors / t_chunks:,.0f} rows/s",
                        "-", "-"))
            out.append((f"{DIM}-d vectors set ({args.vectors:,} rows, batch {args.vector_batch_size})",
                        f"{args.vectors / t_vecs:,.0f} rows/s", "-", "-"))

            # (c) batched lookup of 64 keys
            ids = [c["id"] for c in chunks]
            for _ in range(20):  # warm-up
                store.run("chunk_get_by_ids", {"ids": rng.sample(ids, 64)})
            lat = []
            for _ in range(args.runs):
                keys = rng.sample(ids, 64)
                start = time.perf_counter()
                rows = store.run("chunk_get_by_ids", {"ids": keys})
                lat.append((time.perf_counter() - start) * 1000)
                assert len(rows) == 64
            p50 = statistics.median(lat)
            p95 = statistics.quantiles(lat, n=20)[-1]
            out.append((f"64-key batched lookup ({args.runs} runs)", f"p50 {p50:.2f} ms, p95 {p95:.2f} ms",
                        f"p50 <= {LOOKUP_P50_TARGET_MS:.0f} ms",
                        "met" if p50 <= LOOKUP_P50_TARGET_MS else "MISSED"))
            q_lat = []
            for _ in range(50):
                vec = vectors[rng.randrange(len(vectors))]["embedding"]
                start = time.perf_counter()
                store.run("chunk_vector_search", {"embedding": vec, "k": 10})
                q_lat.append((time.perf_counter() - start) * 1000)
            out.append(("vector top-10 query (50 runs)", f"p50 {statistics.median(q_lat):.2f} ms", "-", "-"))
        finally:
            store.close()
            server.stop()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--triples", type=int, default=100_000)
    parser.add_argument("--entities", type=int, default=20_000)
    parser.add_argument("--relations", type=int, default=50)
    parser.add_argument("--vectors", type=int, default=5_000)
    parser.add_argument("--runs", type=int, default=300)
    parser.add_argument("--batch-size", type=int, default=5000, help="rows per UNWIND for triples/chunks")
    parser.add_argument("--vector-batch-size", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=13)
    args = parser.parse_args()
    rows = bench(args)
    table = Table(title=f"NeoRAG store benchmark (embedded FalkorDB, {os.cpu_count()} CPUs)")
    for col in ("measure", "result", "target", "verdict"):
        table.add_column(col)
    for row in rows:
        table.add_row(*row)
    Console(width=160).print(table)


if __name__ == "__main__":
    main()
