"""``neorag eval kgqa``: StructGPT (or a BM25 relation-walk baseline) on RoG / PathQuestion questions.

Reports Hits@1 and F1 against the gold answers (RoG-style normalised string matching), tokens and LLM calls
per question, and latency; writes JSON plus a PNG chart of the headline metrics.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from app.evaluation.charts import bar_chart
from app.evaluation.metrics import f1, hits_at_1, split_answer
from app.reasoning.adapters import StoreKGView
from app.reasoning.structgpt import KGView, keep_relation, label
from app.reasoning.text import bm25_rank
from app.services.container import Services

Method = Literal["structgpt", "baseline"]
Scope = Literal["sample", "graph"]


@dataclass
class KGQAOptions:
    """How to run the evaluation."""

    dataset: str
    method: Method = "structgpt"
    scope: Scope = "sample"
    max_depth: int = 3
    width: int = 5
    bidirectional: bool = True
    max_tokens_budget: int = 1024
    hops: int = 2
    limit: int = 0
    extra: dict[str, Any] = field(default_factory=dict)


def baseline_walk(view: KGView, question: str, topics: list[str], hops: int) -> list[str]:
    """No-LLM baseline: from the topic entities, follow the BM25-best relation (vs the question)
    ``hops`` times; the entities reached last are the predictions."""
    frontier = [e for e in (view.resolve(t) for t in topics) if e]
    used: set[tuple[str, str]] = set()
    for _ in range(hops):
        offered: list[tuple[str, str]] = []
        for entity in frontier:
            for rel, direction in view.relations(entity):
                if keep_relation(rel) and (rel, direction) not in used and (rel, direction) not in offered:
                    offered.append((rel, direction))
        if not offered:
            break
        best = offered[bm25_rank(question, [label(r, d) for r, d in offered])[0][0]]
        reached: list[str] = []
        for entity in frontier:
            for h, _r, t in view.triples(entity, best[0], best[1]):
                other = t if best[1] == "out" else h
                if other not in reached:
                    reached.append(other)
        if not reached:
            break
        used.add(best)
        frontier = reached
    return frontier


def evaluate_records(
    services: Services,
    records: list[Any],
    opts: KGQAOptions,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    """Run the method on each record (``KGRecord``-like: sample_id, question, answers, q_entity)."""
    from app.reasoning.service import run_structgpt
    from app.services.llm import require_llm

    llm = require_llm(services.llm) if opts.method == "structgpt" else None
    results: list[dict[str, Any]] = []
    for i, rec in enumerate(records):
        started = time.perf_counter()
        sample = rec.sample_id if opts.scope == "sample" else None
        tokens = calls = 0
        triples: list[list[str]] = []
        if llm is not None:
            res = run_structgpt(
                services,
                llm,
                rec.question,
                rec.q_entity,
                opts.dataset,
                sample,
                max_depth=opts.max_depth,
                width=opts.width,
                bidirectional=opts.bidirectional,
                max_tokens_budget=opts.max_tokens_budget,
            )
            answer, predictions = res.answer, split_answer(res.answer)
            tokens, calls = res.usage.get("total_tokens", 0), res.llm_calls
            triples = [list(t) for t in res.triples]
        else:
            view = StoreKGView(services, opts.dataset, sample)
            predictions = baseline_walk(view, rec.question, rec.q_entity, opts.hops)
            answer = ", ".join(predictions)
        latency = time.perf_counter() - started
        p, r, f = f1(predictions, rec.answers)
        results.append(
            {
                "id": rec.sample_id,
                "question": rec.question,
                "topic_entities": rec.q_entity,
                "gold": rec.answers,
                "answer": answer,
                "predictions": predictions,
                "hits@1": hits_at_1(predictions, rec.answers),
                "precision": p,
                "recall": r,
                "f1": f,
                "tokens": tokens,
                "llm_calls": calls,
                "latency_s": round(latency, 4),
                "triples": triples,
            }
        )
        if progress:
            progress(i + 1, len(records))
    return {"summary": summarise(results, opts), "results": results}


def summarise(results: list[dict[str, Any]], opts: KGQAOptions) -> dict[str, Any]:
    """Mean Hits@1 / F1, tokens and LLM calls per question, latency mean / p50 / p95."""
    n = len(results)

    def mean(key: str) -> float:
        return round(sum(float(r[key]) for r in results) / n, 4) if n else 0.0

    lat = sorted(float(r["latency_s"]) for r in results)
    return {
        "dataset": opts.dataset,
        "method": opts.method,
        "scope": opts.scope,
        "questions": n,
        "hits@1": mean("hits@1"),
        "f1": mean("f1"),
        "precision": mean("precision"),
        "recall": mean("recall"),
        "tokens_per_question": mean("tokens"),
        "llm_calls_per_question": mean("llm_calls"),
        "latency_mean_s": mean("latency_s"),
        "latency_p50_s": round(statistics.median(lat), 4) if lat else 0.0,
        "latency_p95_s": round(lat[min(n - 1, int(0.95 * n))], 4) if lat else 0.0,
        "max_depth": opts.max_depth,
        "width": opts.width,
        "hops": opts.hops,
    }


def write_report(report: dict[str, Any], out: Path) -> tuple[Path, Path]:
    """Write ``out`` (JSON) and ``out`` with a .png suffix (chart); returns both paths."""
    import json

    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    s = report["summary"]
    note = (
        f"{s['questions']} questions · {s['tokens_per_question']:.0f} tokens/q · "
        f"{s['latency_mean_s']:.2f} s/q"
    )
    png = bar_chart(
        out.with_suffix(".png"),
        f"KGQA {s['dataset']} — {s['method']}",
        {"Hits@1": s["hits@1"], "F1": s["f1"], "Precision": s["precision"], "Recall": s["recall"]},
        note,
    )
    return out, png
