"""Query-encoder memory under a server-like stream of batch shapes: shape buckets on vs off, side by side.

Run: .venv/bin/python bench/query_encoder_memory.py [--seconds 90] [--out F.json]

Each variant runs in a child process of its own (same seed, same texts): the query encoder the server
would choose (``NEORAG_EMBEDDING_QUERY_PRECISION``, default auto) encodes batches of 1..64 unique
HotpotQA-style questions (what the query batcher sends under load), for ``--seconds``. Reported: RSS
every 10 s, its least-squares growth after the first 30 s (MB/min; ~0 = flat), texts/s, and the p50 of
single-question encodes (the unloaded server's case, where padding to a bucket costs most).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
QUESTIONS = ROOT / "tests" / "fixtures" / "retrieval" / "hotpot_questions.json"


def rss_mb() -> float:
    return int(Path("/proc/self/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def child(bucketed: bool, seconds: float) -> dict[str, object]:
    """One variant, in this process."""
    import torch

    from app.core.config import Settings
    from app.services import query_encoder
    from app.services.embedder_choice import shared_embedder

    query_encoder.BUCKETED = bucketed
    settings = Settings()
    embedder = shared_embedder(settings.embedding_model, "cpu", settings.embedding_batch_size)
    batcher = embedder.queries(1, 0.0, 0, settings.embedding_query_precision)
    while not batcher.selection.info().get("ready"):
        time.sleep(0.5)
    fast = batcher.selection.encoder
    encode = fast.encode if fast is not None else embedder.encode_queries
    torch.set_num_threads(1)  # as the batcher's worker thread
    questions = [q["question"] for q in json.loads(QUESTIONS.read_text())]
    rng = random.Random(7)
    singles = []
    for i in range(200):
        t0 = time.perf_counter()
        encode([f"{questions[i % len(questions)]} ({i})"])
        singles.append((time.perf_counter() - t0) * 1000)
    samples: list[tuple[float, float]] = [(0.0, round(rss_mb(), 1))]
    start = last = time.monotonic()
    texts = 0
    while time.monotonic() - start < seconds:
        k = rng.randint(1, 64)
        encode([f"{rng.choice(questions)} #{texts + i}" for i in range(k)])
        texts += k
        if time.monotonic() - last >= 10:
            last = time.monotonic()
            samples.append((round(last - start, 1), round(rss_mb(), 1)))
    elapsed = time.monotonic() - start
    late = [(t, mb) for t, mb in samples if t >= 30]
    slope = statistics.linear_regression([t for t, _ in late], [mb for _, mb in late])[0] * 60 \
        if len(late) >= 3 else None
    info = batcher.selection.info()
    batcher.close()
    return {"bucketed": bucketed, "encoder": f"{info.get('precision')} traced={info.get('traced')}",
            "texts": texts, "texts_per_s": round(texts / elapsed, 1),
            "single_p50_ms": round(statistics.median(singles), 2),
            "rss_growth_mb_per_min_after_30s": None if slope is None else round(slope, 1),
            "rss_start_end_mb": [samples[0][1], samples[-1][1]], "rss_mb": samples}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=90.0)
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--child", choices=["on", "off"], help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(args.child == "on", args.seconds)))
        return
    variants: list[dict[str, object]] = []
    report: dict[str, object] = {"load_avg_before": os.getloadavg(), "cpus": os.cpu_count(),
                                 "variants": variants}
    for variant in ("on", "off"):
        done = subprocess.run([sys.executable, __file__, "--child", variant, "--seconds", str(args.seconds)],
                              capture_output=True, text=True, check=True)
        result = json.loads(done.stdout.strip().splitlines()[-1])
        variants.append(result)
        print(json.dumps({k: v for k, v in result.items() if k != "rss_mb"}), flush=True)
    report["load_avg_after"] = os.getloadavg()
    if args.out:
        args.out.write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
