"""Personalized PageRank of the multi-hop stage: whole-graph power iteration vs the local push, by graph size.

Run: .venv/bin/python bench/ppr.py --base-cache /tmp/bench_base26.json [--copies 1 17 84] [--eps 1e-5 ...]

The graph is the one ``bench/query.py`` serves: its base export (``--base-cache``, written by
``bench/query.py --base-cache F``: HotpotQA train100 ingested through the real pipeline) copied k times,
every copy sharing one ``Entity`` per key (so 84 copies are ~100k chunks). Each of the 100 HotpotQA train100
questions seeds the walk like ``app.retrieval.multihop.hop_two``: its entities (hubs above 60 chunks
dropped, weight 1 / log(1 + chunks)) and five chunks as the first stage's best. Reports p50 / p90 per walk,
the pushes done, and how far the push lands from the power iteration: the largest difference of any chunk's
score divided by the peak (what the reranker's ``ppr`` feature sees). The top 10 are not compared: the
copies tie, so any 10 of them are a correct answer.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.retrieval.entities import question_keys  # noqa: E402
from app.retrieval.graph_index import EntityGraph  # noqa: E402
from app.retrieval.multihop import question_entities  # noqa: E402
from app.retrieval.ppr import personalized_pagerank, personalized_pagerank_push  # noqa: E402

QUESTIONS = Path("/work/shared/data/hotpotqa-train100/hotpotqa_train.json")


def copied_graph(base: dict, copies: int) -> EntityGraph:
    """The base export's chunks ``copies`` times, ids suffixed, entities shared (as bench/query.py)."""
    mentions: dict[str, list[str]] = {}
    for m in base["mentions"]:
        mentions.setdefault(m["a"], []).append(m["b"])
    rows = [{"id": f"{c['id']}#{k}", "doc_id": f"{c['doc_id']}#{k}", "title": c["title"], "text": c["text"],
             "entities": mentions.get(c["id"], [])} for k in range(copies) for c in base["chunks"]]
    return EntityGraph.build(rows)


def _ms(values: list[float], q: float) -> float:
    return round(1000 * float(np.percentile(values, q)), 2)


def measure(graph: EntityGraph, questions: list[str], eps_values: list[float]) -> list[dict]:
    """One line per eps: power and push timings, pushes, largest normalised difference."""
    rng = random.Random(1)
    seeds = []
    for q in questions:
        cols = question_entities(graph, question_keys(q), 60)
        seeds.append(({j: 1.0 / math.log1p(float(graph.freq[j])) for j in cols},
                      {rng.randrange(len(graph.ids)): rng.random() for _ in range(5)}))
    power_t, exact = [], []
    for ent, chk in seeds:
        t = time.perf_counter()
        exact.append(personalized_pagerank(graph.walk, ent, chk, 0.5))
        power_t.append(time.perf_counter() - t)
    out = []
    for eps in eps_values:
        push_t, pushes, diff = [], [], []
        for (ent, chk), ref in zip(seeds, exact, strict=True):
            t = time.perf_counter()
            got = personalized_pagerank_push(graph.walk, ent, chk, 0.5, eps)
            push_t.append(time.perf_counter() - t)
            pushes.append(got.pushes)
            dense = np.zeros(graph.walk.chunks, dtype=np.float32)
            dense[got.rows] = got.scores
            if ref.max() > 0 and dense.max() > 0:
                diff.append(float(np.abs(ref / ref.max() - dense / dense.max()).max()))
        out.append({"chunks": len(graph.ids), "nnz": int(graph.incidence.nnz), "eps": eps,
                    "power_p50_ms": _ms(power_t, 50), "push_p50_ms": _ms(push_t, 50),
                    "push_p90_ms": _ms(push_t, 90), "pushes_p50": statistics.median(pushes),
                    "max_diff_p50": round(statistics.median(diff), 4), "max_diff_max": round(max(diff), 4)})
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--base-cache", type=Path, required=True, help="bench/query.py's base export (JSON)")
    ap.add_argument("--copies", type=int, nargs="+", default=[1, 17, 84])
    ap.add_argument("--eps", type=float, nargs="+", default=[1e-4, 1e-5, 1e-6])
    args = ap.parse_args()
    base = json.loads(args.base_cache.read_text())
    questions = [q["question"] for q in json.loads(QUESTIONS.read_text())]
    for copies in args.copies:
        for line in measure(copied_graph(base, copies), questions, args.eps):
            print(json.dumps(line), flush=True)


if __name__ == "__main__":
    main()
