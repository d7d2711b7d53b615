"""How a store's cold KG read costs over its first queries: a just-started JVM compiles Neo4j's read path.

Run: .venv/bin/python bench/store_read_warmup.py --backend neo4j|embedded [--rounds 14] [--per-round 2000]

Loads ``--samples`` x ``--triples`` generated RoG-shaped triples (bench/kg_actions.py's generator) into a
fresh store, then sends the batch-1 bucket read (``kg_facts_by_key``, one random bucket key) from this
process, single-threaded, ``--per-round`` times per round, and prints per round the wall time per query and
the CPU per query of the store process and of this process (the Python driver): /proc utime + stime.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.kg_actions import add_store_args, cpu_ms, loaded_store  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_store_args(ap)
    ap.add_argument("--rounds", type=int, default=14)
    ap.add_argument("--per-round", type=int, default=2000)
    args = ap.parse_args()
    with loaded_store(args.backend, args.samples, args.triples, "readwarm-") as (bs, report, buckets):
        print(f"{args.backend}: {report.triples:,} triples, {len(buckets):,} buckets; load average "
              f"{os.getloadavg()[0]:.2f}")
        print("| round | wall ms per query | store CPU ms per query | this process (driver) CPU ms |")
        print("|---|---|---|---|")
        rng = random.Random(1)
        me = os.getpid()
        for rnd in range(1, args.rounds + 1):
            pick = [rng.choice(buckets) for _ in range(args.per_round)]
            client, store, t0 = cpu_ms(me), cpu_ms(bs.pid), time.perf_counter()
            for key in pick:
                bs.store.run("kg_facts_by_key", {"keys": [key]})
            n, wall = args.per_round, time.perf_counter() - t0
            print(f"| {rnd} | {wall * 1000 / n:.3f} | {(cpu_ms(bs.pid) - store) / n:.3f} "
                  f"| {(cpu_ms(me) - client) / n:.3f} |", flush=True)
        print(f"load average at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
