"""Check `neorag eval retrieval`'s default figure through the served API: POST /ranking/preview.

`neorag eval retrieval` ranks in process. This starts `neorag serve` on the same, already ingested graph
(``NEORAG_DATA_DIR`` from the environment, ``--graph``), sends each question of a slice (``--skip`` /
``--limit``, e.g. a train pool's held-out half) to ``POST /ranking/preview`` with ``top_k`` chunks, turns
the items into distinct paragraphs (a chunk id is ``<doc id>:<seq>:<digest>``) and prints recall@2/5/10
beside the in-process figure of a ``--json-out`` report of the same slice (``--eval-json``), and the p50 of
the round trips (after 20 warm-up questions of other lengths; every question is new to the server, so its
embedding is computed: this is how the quality profile's slower question encoder shows).

    NEORAG_DATA_DIR=/work/data24/i24b/neorag .venv/bin/python bench/preview_check.py --dataset 2wiki \\
        /work/data24/pools/2wiki_train1000 --graph eval_tp_2w1000 --skip 501 \\
        --eval-json 2wiki_train1000_heldout_trees.json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402

from app.evaluation.retrieval_eval import EvalQuestion, load_dataset, recall_at  # noqa: E402
from bench.query import spawn  # noqa: E402
from ingest.load import record_doc_id  # noqa: E402

KS = (2, 5, 10)


def support_keys(q: EvalQuestion) -> set[str]:
    """Supporting paragraphs: doc ids where the question carries their text (MuSiQue), else titles."""
    return {record_doc_id(t, q.support_texts[j]) if j < len(q.support_texts) else f"title:{t}"
            for j, t in enumerate(q.support_titles)}


def paragraphs(items: list[dict]) -> list[tuple[str, str]]:
    """Distinct (doc id, title) of the preview's items, in their order."""
    seen: dict[str, tuple[str, str]] = {}
    for item in items:
        doc = str(item["id"]).rsplit(":", 2)[0]
        seen.setdefault(doc, (doc, item.get("title") or ""))
    return list(seen.values())


def start(graph: str) -> tuple[subprocess.Popen[bytes], str]:
    """``neorag serve`` on ``graph`` (no LLM), once /health answers."""
    env = {**os.environ, "NEORAG_GRAPH_NAME": graph}
    env.pop("NEORAG_LLM_BASE_URL", None)
    return spawn(env, wait_s=120.0)


def main(argv: list[str] | None = None) -> dict[str, object]:
    """Run the check; print and return the report."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("path", type=Path)
    ap.add_argument("--dataset", required=True)
    ap.add_argument("--graph", required=True)
    ap.add_argument("--skip", type=int, default=0)
    ap.add_argument("--limit", type=int)
    ap.add_argument("--top-k", type=int, default=30, help="chunks asked of /ranking/preview (recall@10 needs "
                    "10 distinct paragraphs)")
    ap.add_argument("--eval-json", type=Path, help="`neorag eval retrieval --json-out` of the same slice")
    args = ap.parse_args(argv)
    questions, _ = load_dataset(args.dataset, args.path)
    questions = questions[args.skip:][: args.limit]
    proc, url = start(args.graph)
    sums = dict.fromkeys(KS, 0.0)
    short = 0
    times: list[float] = []
    try:
        with httpx.Client(base_url=url, timeout=60) as client:
            for n in range(1, 21):
                client.post("/ranking/preview", json={"question": " ".join(["warm"] * n)}).raise_for_status()
            for q in questions:
                t = time.perf_counter()
                r = client.post("/ranking/preview", json={"question": q.question, "top_k": args.top_k})
                times.append((time.perf_counter() - t) * 1000)
                r.raise_for_status()
                ranked = paragraphs(r.json()["items"])
                short += len(ranked) < max(KS)
                keys = support_keys(q)
                for k in KS:
                    sums[k] += recall_at(ranked, keys, k)
    finally:
        proc.terminate()
        proc.wait(timeout=60)
    report: dict[str, object] = {
        "questions": len(questions), "graph": args.graph, "top_k": args.top_k,
        "preview": {f"@{k}": round(v / max(len(questions), 1), 4) for k, v in sums.items()},
        "fewer_than_10_paragraphs": short,
        "p50_ms": round(statistics.median(times), 2) if times else None,
    }
    if args.eval_json:
        report["eval_default"] = json.loads(args.eval_json.read_text(encoding="utf-8"))["recall"]["default"]
    print(json.dumps(report))
    return report


if __name__ == "__main__":
    main()
