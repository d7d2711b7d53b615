"""``neorag eval corag``: CoRAG's custom_batch_eval over NeoRAG (same input and output formats).

Input (``--eval_file``): a JSON list of objects with ``question`` (or ``query``) and optionally ``answer`` /
``answers``; HotpotQA-style ``context`` + ``supporting_facts`` or MuSiQue-style ``paragraphs`` (with
``is_supporting``) give the golden facts used for recall.
Output (``--save_file``): a JSON list whose index 0 is the summary (time, micro recall, ...) and whose
other items are per-sample ``{question, answer, ground_truth, reasoning_steps, time, corag_recall?,
naive_recall?}``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.core.errors import BadInput
from app.evaluation.charts import bar_chart
from app.evaluation.metrics import match, micro_recall, normalize, recall
from app.reasoning.corag import CoRAGConfig
from app.services.container import Services

Fact = tuple[str, str]  # (title, text)


@dataclass
class CoRAGEvalOptions:
    """The agent's knobs (CoRAG's defaults) plus the evaluation's own.

    ``agent.num_contexts`` also sets the naive-retrieval depth (0: top_k x max_path_length)."""

    agent: CoRAGConfig = field(default_factory=CoRAGConfig)
    calc_recall: bool = False
    enable_naive_retrieval: bool = False
    num_threads: int = 1
    limit: int = 0


def load_eval_file(path: Path) -> list[dict[str, Any]]:
    """The eval file's items (a JSON list, or JSONL)."""
    if not path.exists():
        raise BadInput(f"--eval_file {path} does not exist", field="eval_file")
    text = path.read_text(encoding="utf-8")
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        try:
            data = [json.loads(line) for line in text.splitlines() if line.strip()]
        except json.JSONDecodeError as exc:
            raise BadInput(
                f"--eval_file {path} is neither JSON nor JSONL: {exc}", field="eval_file"
            ) from None
    if isinstance(data, dict):
        data = data.get("data") or data.get("questions") or [data]
    items = [d for d in data if isinstance(d, dict) and (d.get("question") or d.get("query"))]
    if not items:
        raise BadInput(f"--eval_file {path} holds no objects with a 'question'", field="eval_file")
    return items


def golden_facts(item: dict[str, Any]) -> list[Fact]:
    """Supporting facts: HotpotQA sentences (``supporting_facts`` x ``context``) or MuSiQue paragraphs."""
    facts: list[Fact] = []
    context = item.get("context")
    if item.get("supporting_facts") and isinstance(context, list):
        by_title = {str(c[0]): c[1] for c in context if isinstance(c, list | tuple) and len(c) == 2}
        for sf in item["supporting_facts"]:
            title, idx = str(sf[0]), int(sf[1])
            sents = by_title.get(title) or []
            if 0 <= idx < len(sents):
                facts.append((title, str(sents[idx]).strip()))
    for para in item.get("paragraphs") or []:
        if isinstance(para, dict) and para.get("is_supporting"):
            facts.append(
                (str(para.get("title", "")), str(para.get("paragraph_text") or para.get("text") or ""))
            )
    return [f for f in dict.fromkeys(facts) if f[1]]


def fact_found(fact: Fact, passages: list[dict[str, Any]]) -> bool:
    """A golden fact is retrieved when a passage of the same title (if both have one) contains it, or is
    contained in it (a long paragraph split into chunks)."""
    title, text = normalize(fact[0]), normalize(fact[1])
    for p in passages:
        ptitle = normalize(str(p.get("title") or ""))
        if title and ptitle and ptitle != title:
            continue
        body = normalize(str(p.get("contents") or p.get("text") or ""))
        if not body:
            continue
        if text in body or (len(body) >= 40 and body in text) or text[:80] in body:
            return True
    return False


def ground_truth(item: dict[str, Any]) -> list[str]:
    """Gold answers: ``answers`` (list) or ``answer`` (string or list)."""
    value = item.get("answers", item.get("answer"))
    if value is None:
        return []
    return [str(v) for v in value] if isinstance(value, list) else [str(value)]


def evaluate(
    services: Services,
    items: list[dict[str, Any]],
    opts: CoRAGEvalOptions,
    progress: Callable[[int, int], None] | None = None,
) -> list[dict[str, Any]]:
    """Run CoRAG (and optionally naive retrieval) on every item; returns [summary, *samples]."""
    from app.reasoning.adapters import passage_retriever
    from app.reasoning.corag import CoRAGAgent
    from app.services.llm import require_llm

    llm = require_llm(services.llm)
    retriever = passage_retriever(services)
    cfg = opts.agent
    naive_k = cfg.num_contexts or cfg.top_k * cfg.max_path_length
    done = 0
    started_all = time.perf_counter()

    def one(item: dict[str, Any]) -> dict[str, Any]:
        question = str(item.get("question") or item.get("query"))
        t0 = time.perf_counter()
        res = CoRAGAgent(llm, retriever, cfg).run(question)
        t_corag = time.perf_counter() - t0
        gold = ground_truth(item)
        out: dict[str, Any] = {
            "question": question,
            "answer": res.answer,
            "ground_truth": gold,
            "reasoning_steps": res.path.steps(),
            "llm_calls": res.llm_calls,
            "usage": res.usage,
            "answer_hit": any(match(res.answer, g) for g in gold),
        }
        times = {"corag": round(t_corag, 4)}
        facts = golden_facts(item) if opts.calc_recall else []
        if opts.calc_recall:
            chain = [p for docs in res.path.passages for p in docs]
            found = sum(fact_found(f, chain) for f in facts)
            out.update(
                {"golden_facts": len(facts), "corag_found": found, "corag_recall": recall(found, len(facts))}
            )
        if opts.enable_naive_retrieval:
            t1 = time.perf_counter()
            naive = retriever(question, naive_k)
            times["naive_retrieval"] = round(time.perf_counter() - t1, 4)
            out["naive_doc_ids"] = [str(p.get("id", "")) for p in naive]
            if opts.calc_recall:
                found_n = sum(fact_found(f, naive) for f in facts)
                out.update({"naive_found": found_n, "naive_recall": recall(found_n, len(facts))})
        times["total"] = round(time.perf_counter() - t0, 4)
        out["time"] = times
        return out

    results: list[dict[str, Any]] = []
    with ThreadPoolExecutor(max_workers=max(1, opts.num_threads)) as pool:
        for out in pool.map(one, items):
            results.append(out)
            done += 1
            if progress:
                progress(done, len(items))
    return [summarise(results, opts, time.perf_counter() - started_all, naive_k), *results]


def summarise(
    results: list[dict[str, Any]], opts: CoRAGEvalOptions, wall_s: float, naive_k: int
) -> dict[str, Any]:
    """Index 0 of the save file: times, micro recall(s), answer hit rate, settings."""
    n = len(results)
    summary: dict[str, Any] = {
        "summary": True,
        "num_samples": n,
        "avg_time": round(sum(r["time"]["total"] for r in results) / n, 4) if n else 0.0,
        "avg_corag_time": round(sum(r["time"]["corag"] for r in results) / n, 4) if n else 0.0,
        "total_time": round(wall_s, 4),
        "answer_hit_rate": round(sum(bool(r["answer_hit"]) for r in results) / n, 4) if n else 0.0,
        "avg_llm_calls": round(sum(r["llm_calls"] for r in results) / n, 2) if n else 0.0,
        "avg_tokens": round(sum(r["usage"].get("total_tokens", 0) for r in results) / n, 1) if n else 0.0,
        "decode_strategy": opts.agent.decode_strategy,
        "max_path_length": opts.agent.max_path_length,
        "top_k": opts.agent.top_k,
    }
    if opts.calc_recall:
        summary["corag_micro_recall"] = round(
            micro_recall([(r["corag_found"], r["golden_facts"]) for r in results]), 4
        )
        summary["golden_facts"] = sum(r["golden_facts"] for r in results)
    if opts.enable_naive_retrieval:
        summary["naive_top_k"] = naive_k
        summary["avg_naive_time"] = (
            round(sum(r["time"]["naive_retrieval"] for r in results) / n, 4) if n else 0.0
        )
        if opts.calc_recall:
            summary["naive_micro_recall"] = round(
                micro_recall([(r["naive_found"], r["golden_facts"]) for r in results]), 4
            )
    return summary


def write_results(results: list[dict[str, Any]], save_file: Path) -> tuple[Path, Path]:
    """Write the save file (JSON) and a PNG chart beside it (same name, .png)."""
    save_file.parent.mkdir(parents=True, exist_ok=True)
    save_file.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    s = results[0]
    metrics = {"answer hit": float(s["answer_hit_rate"])}
    if "corag_micro_recall" in s:
        metrics["CoRAG recall"] = float(s["corag_micro_recall"])
    if "naive_micro_recall" in s:
        metrics["naive recall"] = float(s["naive_micro_recall"])
    note = f"{s['num_samples']} questions · {s['decode_strategy']} · {s['avg_time']:.2f} s/q"
    png = bar_chart(save_file.with_suffix(".png"), "CoRAG on NeoRAG retrieval", metrics, note)
    return save_file, png
