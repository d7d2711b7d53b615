"""What the shape of a cold KG read costs: 256 fact buckets as 256 rows, or as one row holding a list.

Run: .venv/bin/python bench/kg_read_shape.py --backend neo4j|embedded [--queries 150] [--batch 256]

Loads ``--samples`` x ``--triples`` generated RoG-shaped triples (bench/kg_actions.py's generator) into a
fresh store, then reads ``--batch`` random buckets per query with three forms of the bucket read, sent
through NeoRAG's store adapter as prepared statements (so the adapter's row conversion is counted),
``--queries`` times each after as many warm-up queries, in two alternating rounds. Prints the wall time
per query and the CPU per bucket of this process (driver + adapter) and of the store: /proc utime + stime.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.store.base import Prepared  # noqa: E402
from bench.kg_actions import add_store_args, cpu_ms, loaded_store  # noqa: E402

SHAPES = {
    "a row per bucket": "UNWIND $keys AS k MATCH (f:KGFacts {key: k}) RETURN k AS key, f.facts AS facts",
    "one row, list of pairs": "UNWIND $keys AS k MATCH (f:KGFacts {key: k}) "
                              "RETURN collect([k, f.facts]) AS found",
    "one row, list of maps (NeoRAG's)": "UNWIND $keys AS k MATCH (f:KGFacts {key: k}) "
                                        "RETURN collect({key: k, facts: f.facts}) AS found",
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_store_args(ap)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--queries", type=int, default=150)
    args = ap.parse_args()
    with loaded_store(args.backend, args.samples, args.triples, "readshape-") as (bs, _, buckets):
        rng = random.Random(1)

        def read(text: str) -> None:
            keys = rng.sample(buckets, args.batch)
            bs.store.run_prepared(Prepared("kg_read_shape", text, {"keys": keys}, write=False))

        for text in SHAPES.values():  # warm-up (the JVM compiles each shape's path)
            for _ in range(args.queries):
                read(text)
        print(f"{args.backend}: {len(buckets):,} buckets, {args.batch} per query; load average "
              f"{os.getloadavg()[0]:.2f}")
        print("| round | shape | wall ms per query | this process CPU us per bucket | "
              "store CPU us per bucket |")
        print("|---|---|---|---|---|")
        me, per = os.getpid(), args.queries * args.batch
        for rnd in (1, 2):
            for name, text in SHAPES.items():
                client, store, t0 = cpu_ms(me), cpu_ms(bs.pid), time.perf_counter()
                for _ in range(args.queries):
                    read(text)
                wall = (time.perf_counter() - t0) * 1000 / args.queries
                print(f"| {rnd} | {name} | {wall:.2f} | {(cpu_ms(me) - client) * 1000 / per:.1f} | "
                      f"{(cpu_ms(bs.pid) - store) * 1000 / per:.1f} |", flush=True)
        print(f"load average at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
