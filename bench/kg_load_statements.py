"""Where a KG load's store time goes: seconds per named statement (``GraphStore.run_prepared`` timed).

Same generated data as bench/kg_actions.py, loaded once into a fresh store; statements run on the loader's
two write lanes, so their times overlap and add up to more than the wall time.

    .venv/bin/python bench/kg_load_statements.py --backend neo4j --samples 200 --triples 2000
"""

from __future__ import annotations

import argparse
import collections
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.backends import BACKENDS, bench_store  # noqa: E402
from bench.kg_actions import DATASET, make_samples, write_seed_layout  # noqa: E402
from ingest.kg.loader import load_path  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backend", choices=BACKENDS, default="embedded")
    parser.add_argument("--samples", type=int, default=200)
    parser.add_argument("--triples", type=int, default=2000)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="kg-statements-"))
    seconds: collections.Counter[str] = collections.Counter()
    calls: collections.Counter[str] = collections.Counter()
    print(f"load average before {os.getloadavg()[0]:.2f}", flush=True)
    try:
        with bench_store(args.backend, work / "store") as bs:
            run = bs.store.run_prepared

            def timed(prepared: Any) -> Any:
                t0 = time.perf_counter()
                try:
                    return run(prepared)
                finally:
                    seconds[prepared.name] += time.perf_counter() - t0
                    calls[prepared.name] += 1

            bs.store.run_prepared = timed  # type: ignore[method-assign]
            write_seed_layout(work / "data", make_samples(args.samples, args.triples))
            report = load_path(bs.store, work / "data", DATASET)
        print(f"{args.backend}: {report.triples:,} distinct triples in {report.seconds:.1f} s = "
              f"{report.triples_per_s:,.0f} triples/s")
        for name, total in seconds.most_common():
            print(f"  {name:<28} {total:7.2f} s  {calls[name]:>5} statements")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"load average after {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
