"""Where a KG load's time goes: seconds per named statement (``GraphStore.run_prepared`` and ``run``
timed), CPU seconds of the loader process and of the store's server process, and the load rate per tenth
of the triples (does a triple cost more as the graph grows?).

Same generated data as bench/kg_actions.py, loaded once into a fresh store; statements run on the loader's
two write lanes, so their times overlap and add up to more than the wall time. Per-million figures make
runs of different sizes comparable.

    .venv/bin/python bench/kg_load_statements.py --backend neo4j --samples 200 --triples 2000
    .venv/bin/python bench/kg_load_statements.py --samples 1000 --triples 3000
"""

from __future__ import annotations

import argparse
import collections
import os
import resource
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


def process_cpu_s(pid: int) -> float:
    """User + system CPU seconds of a process and its waited-for children (e.g. AOF rewrites)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return sum(int(v) for v in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def self_cpu_s() -> float:
    """User + system CPU seconds of this process (every thread)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


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
            run_prepared, run = bs.store.run_prepared, bs.store.run

            def timed(name: str, call: Any, *a: Any) -> Any:
                t0 = time.perf_counter()
                try:
                    return call(*a)
                finally:
                    seconds[name] += time.perf_counter() - t0
                    calls[name] += 1

            bs.store.run_prepared = lambda p: timed(p.name, run_prepared, p)  # type: ignore[method-assign]
            bs.store.run = lambda name, params=None: timed(name, run, name, params)  # type: ignore[method-assign]
            write_seed_layout(work / "data", make_samples(args.samples, args.triples))
            marks: list[tuple[float, int, float, float]] = []

            def mark(_samples: int, triples: int) -> None:
                if marks and triples == marks[-1][1]:
                    return  # the loader's final report repeats the last chunk's
                marks.append((time.perf_counter(), triples, self_cpu_s(), process_cpu_s(bs.pid)))

            mark(0, 0)
            report = load_path(bs.store, work / "data", DATASET, progress=mark)
        per_m = 1e6 / max(report.triples, 1)
        (t0, _, c0, s0), (t1, _, c1, s1) = marks[0], marks[-1]
        print(f"{args.backend}: {report.triples:,} distinct triples in {report.seconds:.1f} s = "
              f"{report.triples_per_s:,.0f} triples/s")
        print(f"  CPU s per million triples: loader {(c1 - c0) * per_m:.2f}, store server "
              f"{(s1 - s0) * per_m:.2f}; wall {(t1 - t0) * per_m:.2f}")
        print("  per tenth of the triples: triples/s, loader CPU s and server CPU s per million")
        tenth, last = report.triples / 10, marks[0]
        for m in marks[1:]:
            if m[1] - last[1] >= tenth or m is marks[-1]:
                n = max(m[1] - last[1], 1)
                print(f"    up to {m[1]:>10,}: {n / (m[0] - last[0]):>9,.0f}/s  "
                      f"{(m[2] - last[2]) * 1e6 / n:6.2f}  {(m[3] - last[3]) * 1e6 / n:6.2f}")
                last = m
        print("  statement                    s/M triples  total s  statements")
        for name, total in seconds.most_common():
            print(f"  {name:<28} {total * per_m:9.2f}  {total:7.2f}  {calls[name]:>5}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"load average after {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
