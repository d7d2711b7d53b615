"""Benchmark: where NeoRAG's per-request time went at batch 1, one change at a time, in one run.

Loads a small generated KG (KG-R1 layout) into a fresh embedded FalkorDB and serves it from several
NeoRAG servers at once, each with one more of the changes of issue 18 than the previous one:

1. ``before``: the tree given by ``--before`` (``git archive <commit> | tar -x -C DIR``) as its
   ``neorag serve`` ran (uvicorn defaults without httptools/uvloop: h11, asyncio, access log on);
   ``1b``: this tree served the same way with ``NEORAG_KG_GENERATION_CHECK_MS=0`` (the old behaviour);
2. ``+ fresh generation check``: this tree, same uvicorn settings, ``NEORAG_KG_GENERATION_CHECK_MS=100``
   (a warm batch makes no store round trip and is answered on the event loop, no thread hop);
3. ``+ no access log``;
4. ``+ httptools, uvloop``: what ``neorag serve`` runs now.

Every server gets the same batch-1 requests (the KG-R1 actions of bench/kg_anchor.py, seed shape), first
once to warm its cache, then in alternating rounds; reported per server: the best round's requests/s and
latency, and the CPU milliseconds per request of the server process plus FalkorDB's (from /proc).

    .venv/bin/python bench/kg_overhead.py --before /tmp/neorag_before
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.store.cypher_library import CypherLibrary  # noqa: E402
from app.store.embedded import EmbeddedServer, free_port  # noqa: E402
from app.store.falkor import FalkorStore  # noqa: E402
from bench.kg_actions import DATASET, make_samples  # noqa: E402
from bench.kg_anchor import Servers, cpu_seconds, drive, make_workload, uptime, write_kgr1_layout  # noqa: E402
from ingest.kg.loader import load_path  # noqa: E402

UVICORN_BEFORE = ["-m", "uvicorn", "app.api.main:create_app", "--factory", "--host", "127.0.0.1",
                  "--http", "h11", "--loop", "asyncio", "--log-level", "info"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before", type=Path, required=True, help="NeoRAG source tree before the changes")
    parser.add_argument("--samples", type=int, default=100)
    parser.add_argument("--triples", type=int, default=1000)
    parser.add_argument("--requests", type=int, default=3000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--modes", default="new,keepalive")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="kgoverhead-"))
    db = EmbeddedServer(work / "db", port=free_port())
    servers = Servers()
    print(f"start: {uptime()}", flush=True)
    try:
        samples = make_samples(args.samples, args.triples)
        write_kgr1_layout(work / "kgr1", samples)
        info = db.start()
        store = FalkorStore(CypherLibrary(ROOT / "cypher", "falkordb"), "127.0.0.1", info.port, "overhead")
        load_path(store, work / "kgr1", DATASET)
        store.close()
        env = {**os.environ, "NEORAG_FALKOR_DATA_DIR": str(work / "db"), "NEORAG_FALKOR_PORT": str(info.port),
               "NEORAG_GRAPH_NAME": "overhead", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
               "NEORAG_EMBEDDING_QUERY_PRECISION": "fp32", "NEORAG_EMBEDDING_QUERY_WARM_WORDS": "0"}
        serve = [sys.executable, "-c", "from app.cli import main; main()", "serve", "--host", "127.0.0.1"]
        steps = [
            ("1 before", args.before, [sys.executable, *UVICORN_BEFORE], {}),
            ("1b this tree, check on every batch", ROOT, [sys.executable, *UVICORN_BEFORE],
             {"NEORAG_KG_GENERATION_CHECK_MS": "0"}),
            ("2 + fresh generation check", ROOT, [sys.executable, *UVICORN_BEFORE],
             {"NEORAG_KG_GENERATION_CHECK_MS": "100"}),
            ("3 + no access log", ROOT, [sys.executable, *UVICORN_BEFORE, "--no-access-log"],
             {"NEORAG_KG_GENERATION_CHECK_MS": "100"}),
            ("4 + httptools, uvloop (neorag serve)", ROOT, serve, {}),
        ]
        targets: dict[str, tuple[str, list[int]]] = {}
        for name, tree, cmd, extra in steps:
            port = free_port()
            pid = servers.start([*cmd, "--port", str(port)], tree, {**env, **extra},
                                f"http://127.0.0.1:{port}/health")
            targets[name] = (f"http://127.0.0.1:{port}/retrieve", [pid, info.pid])
        items = make_workload(samples, args.requests, seed=101)
        batches = [json.dumps([item]).encode() for item in items]
        print(f"servers up: {uptime()}\n\n| step | connections | requests/s | p50 / p95 ms | server CPU ms "
              "per request (NeoRAG + FalkorDB) |\n|---|---|---|---|---|", flush=True)
        for mode in args.modes.split(","):
            keep = mode == "keepalive"
            for url, _ in targets.values():
                asyncio.run(drive(url, batches, args.concurrency, keep))
            runs: dict[str, list[dict[str, float]]] = {t: [] for t in targets}
            for r in range(args.rounds):
                for name in (list(targets) if r % 2 == 0 else list(reversed(targets))):
                    url, pids = targets[name]
                    cpu0 = cpu_seconds(pids)
                    result = asyncio.run(drive(url, batches, args.concurrency, keep))
                    result["cpu_ms"] = 1000 * (cpu_seconds(pids) - cpu0) / len(batches)
                    runs[name].append(result)
            for name, results in runs.items():
                best = max(results, key=lambda x: x["requests_per_s"])
                cpu = sorted(x["cpu_ms"] for x in results)[len(results) // 2]
                print(f"| {name} | {mode} | {best['requests_per_s']:,.0f} | {best['p50_ms']:.1f} / "
                      f"{best['p95_ms']:.1f} | {cpu:.2f} (median of {len(results)}) |", flush=True)
            print(f"  ({uptime()})", flush=True)
    finally:
        servers.stop()
        db.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
