"""In-process vector search: one exact float32 product vs the int8 first pass + exact re-scoring.

Run: .venv/bin/python bench/vector_search.py --base-cache /tmp/bench_base26.json [--sizes 20000 100000]

The vectors are those ``bench/query.py`` serves: its base export (``--base-cache``; real all-MiniLM-L6-v2
chunk embeddings of HotpotQA train100) copied and jittered to each size the way bench/query.py copies them.
The questions are 200 base vectors jittered again (stand-ins for question embeddings near the corpus).
Reports p50 / p90 per search (k = 80, what a question asks for) and whether the top 80 (ids, order) equal
the exact product's.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.retrieval.vectors import DenseIndex, unit_rows  # noqa: E402

K = 80


def jittered(base: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
    """``size`` unit rows: base rows in turn, each with Gaussian noise of 0.02 per component."""
    rows = base[np.arange(size) % len(base)] + 0.02 * rng.standard_normal((size, base.shape[1]))
    return unit_rows(rows.astype(np.float32).tolist())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--base-cache", type=Path, required=True)
    ap.add_argument("--sizes", type=int, nargs="+", default=[20_000, 100_000])
    ap.add_argument("--questions", type=int, default=200)
    args = ap.parse_args()
    base = np.asarray([c["embedding"] for c in json.loads(args.base_cache.read_text())["chunks"]],
                      dtype=np.float32)
    rng = np.random.default_rng(0)
    questions = jittered(base, args.questions, rng)
    for size in args.sizes:
        matrix = jittered(base, size, rng)
        ids = [f"c{i:07d}" for i in range(size)]
        fast = DenseIndex(ids, matrix, "m")
        exact = DenseIndex(ids, matrix, "m")
        exact.codes = None  # the plain product, for comparison
        times: dict[str, list[float]] = {"exact": [], "int8 first": []}
        same = 0
        for q in questions.tolist():
            t = time.perf_counter()
            want = exact.search(q, K)
            times["exact"].append(time.perf_counter() - t)
            t = time.perf_counter()
            got = fast.search(q, K)
            times["int8 first"].append(time.perf_counter() - t)
            same += [cid for cid, _ in got] == [cid for cid, _ in want]
        print(json.dumps({"chunks": size, **{f"{name} p50 / p90 ms": [
            round(1000 * statistics.median(v), 2), round(1000 * float(np.percentile(v, 90)), 2)]
            for name, v in times.items()}, "top 80 identical": f"{same}/{len(questions)}",
            "memory MB (matrix, codes)": [round(matrix.nbytes / 1e6, 1),
                                          round(fast.codes.nbytes / 1e6, 1) if fast.codes else 0]}),
              flush=True)


if __name__ == "__main__":
    main()
