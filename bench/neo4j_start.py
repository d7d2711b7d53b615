"""Benchmark: how long ``neorag neo4j start`` takes to a Bolt login on a fresh data dir, and ``stop``.

Runs the real CLI (a new process each time, as a user types it) on a new temp data dir per round, with the
class-data-sharing archive (``neorag neo4j install`` builds it) and without it (``--no-cds`` rounds use
a cache dir whose archive is hidden: a symlinked copy of the jars and launcher only), alternating, and
prints each round, the medians and their ratio, with the load average before and after.

    .venv/bin/python bench/neo4j_start.py [--rounds 3]
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.core.config import Settings  # noqa: E402
from app.store.embedded import free_port  # noqa: E402
from app.store.neo4j_runtime import Neo4jRuntime  # noqa: E402

NEORAG = str(Path(sys.executable).parent / "neorag")


def cache_without_archive(runtime: Neo4jRuntime, work: Path) -> Path:
    """A cache dir with the same jars and launcher (symlinks) and no archive."""
    cache = work / "cache-no-cds"
    home = cache / runtime.home.name
    home.mkdir(parents=True)
    for part in ("lib", "launcher", "plugins"):
        if (runtime.home / part).exists():
            (home / part).symlink_to(runtime.home / part)
    return cache


def one_round(cache: Path, work: Path) -> tuple[float, float]:
    """(seconds to a login as measured around the CLI, seconds of `stop`)."""
    data = Path(tempfile.mkdtemp(prefix="start-", dir=work))
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("NEORAG_")},
           "NEORAG_NEO4J_CACHE_DIR": str(cache)}
    args = ["--data-dir", str(data)]
    t0 = time.perf_counter()
    subprocess.run([NEORAG, "neo4j", "start", *args, "--bolt-port", str(free_port()),
                    "--http-port", str(free_port())], env=env, check=True, capture_output=True)
    started = time.perf_counter() - t0
    t0 = time.perf_counter()
    subprocess.run([NEORAG, "neo4j", "stop", *args], env=env, check=True, capture_output=True)
    stopped = time.perf_counter() - t0
    shutil.rmtree(data, ignore_errors=True)
    return started, stopped


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    settings = Settings()
    runtime = Neo4jRuntime(settings.neo4j_cache_dir, java=settings.neo4j_java)
    java = runtime.java()
    if not runtime.cds_archive(java).exists():
        sys.exit("no start-up archive: run `neorag neo4j install` first")
    work = Path(tempfile.mkdtemp(prefix="neo4j-start-bench-"))
    print(f"load average before {os.getloadavg()[0]:.2f}", flush=True)
    try:
        plain = cache_without_archive(runtime, work)
        times: dict[str, list[tuple[float, float]]] = {"archive": [], "no archive": []}
        for i in range(args.rounds):
            for name, cache in (("archive", settings.neo4j_cache_dir), ("no archive", plain)):
                start, stop = one_round(Path(cache).expanduser(), work)
                times[name].append((start, stop))
                print(f"round {i + 1} {name:<10}: start {start:5.1f} s, stop {stop:4.1f} s", flush=True)
        med = {name: (statistics.median(s for s, _ in runs), statistics.median(t for _, t in runs))
               for name, runs in times.items()}
        for name, (start, stop) in med.items():
            print(f"median {name:<10}: start {start:5.1f} s, stop {stop:4.1f} s")
        print(f"start with / without the archive: {med['archive'][0] / med['no archive'][0]:.2f}x")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"load average after {os.getloadavg()[0]:.2f}; {platform.platform()}, {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
