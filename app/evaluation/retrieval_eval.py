"""`neorag eval retrieval`: recall@k of supporting paragraphs for every retrieval variant in one run.

The corpus is ingested (no LLM) into its own graph; every method runs on the same questions in one run:
single retrievers (vector, bm25), the issue-5 pipelines (hybrid, hybrid+graph = graph bonuses), the
default (``NEORAG_RETRIEVAL_GRAPH_MODE``; ``auto``: multihop or bonus by corpus, the report's
``default_graph_mode`` says which), the multi-hop pipeline and its ablations (one signal switched off each).
Per method: recall@{2,5,10}
and the p50 latency of one question in process; per run: ingest chunks/s and relationships per chunk.
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.core.config import Settings
from app.core.errors import BadInput
from app.retrieval.hybrid import lexical_search, query_embedding, retrieve
from app.retrieval.multihop_stage import ABLATIONS, resolve_graph_mode
from app.retrieval.options import options_from_settings
from app.retrieval.vectors import vector_search
from app.services.container import Services

METHODS = ("vector", "bm25", "hybrid", "hybrid+graph", "default", "multihop",
           *(f"multihop-{a}" for a in ABLATIONS))
SINGLE = ("vector", "bm25")
KS = (2, 5, 10)
DATASETS = ("hotpotqa", "musique", "2wiki")


@dataclass
class EvalQuestion:
    """A question with the keys of its supporting paragraphs (doc ids, or titles when ids are unknown)."""

    id: str
    question: str
    support_titles: list[str]
    support_texts: list[str] = field(default_factory=list)


def _find(path: Path, suffix: str) -> Path | None:
    hits = sorted(path.glob(f"*{suffix}"))
    return hits[0] if hits else None


def load_dataset(dataset: str, path: Path) -> tuple[list[EvalQuestion], Path]:
    """(questions, corpus path) from a folder with a questions ``*.json`` and a ``*_corpus.json``."""
    if dataset not in DATASETS:
        raise BadInput(f"--dataset must be one of {', '.join(DATASETS)}, got {dataset!r}", field="dataset")
    if path.is_dir():
        corpus = _find(path, "_corpus.json")
        qfile = next((p for p in sorted(path.glob("*.json")) if not p.name.endswith("_corpus.json")), None)
    else:
        qfile, corpus = path, None
    if qfile is None:
        raise BadInput(f"no questions file (*.json) in {path}", field="path")
    data = json.loads(qfile.read_text(encoding="utf-8"))
    out = []
    for i, rec in enumerate(data):
        if dataset in ("hotpotqa", "2wiki"):  # 2WikiMultihopQA uses HotpotQA's format
            titles = sorted({t for t, _ in rec.get("supporting_facts", [])})
            out.append(EvalQuestion(str(rec.get("_id", i)), rec["question"], titles))
        else:
            sup = [p for p in rec.get("paragraphs", []) if p.get("is_supporting")]
            out.append(
                EvalQuestion(
                    str(rec.get("id", i)),
                    rec["question"],
                    [p["title"] for p in sup],
                    [p["paragraph_text"] for p in sup],
                )
            )
    return out, corpus or qfile


def ingest_corpus(services: Services, corpus: Path, fresh: bool = True) -> dict[str, Any]:
    """Ingest ``corpus`` without an LLM into the services' graph (cleared first when ``fresh``)."""
    from ingest.options import IngestOptions
    from ingest.pipeline import ingest_path

    if fresh:
        services.store.run("graph_clear")
        services.store.bootstrap(services.embedder.dimension)
    result = ingest_path(
        services, corpus, IngestOptions(llm_relations=False, checkpoint=False, entity_mode="heuristic")
    )
    return dict(result.__dict__)


def _support_keys(q: EvalQuestion, doc_ids: set[str]) -> set[str]:
    """Supporting paragraphs as doc ids when they resolve, else as titles."""
    try:
        from ingest.load import record_doc_id
    except ImportError:  # pragma: no cover - ingest ships with the app
        return {f"title:{t}" for t in q.support_titles}
    keys = set()
    for j, title in enumerate(q.support_titles):
        text = q.support_texts[j] if j < len(q.support_texts) else None
        did = record_doc_id(title, text) if text is not None else None
        keys.add(did if did in doc_ids else f"title:{title}")
    return keys


def _paragraphs(chunk_ids: list[str], index: dict[str, tuple[str, str]]) -> list[tuple[str, str]]:
    """Distinct (doc_id, title) in ranked order."""
    seen: dict[str, tuple[str, str]] = {}
    for cid in chunk_ids:
        doc, title = index.get(cid, (cid, ""))
        seen.setdefault(doc, (doc, title))
    return list(seen.values())


def recall_at(ranked: list[tuple[str, str]], keys: set[str], k: int) -> float:
    """Share of the supporting ``keys`` (doc ids or ``title:T``) among the first ``k`` (doc id, title)."""
    if not keys:
        return 0.0
    top = ranked[:k]
    found = {key for key in keys if any(key == d or key == f"title:{t}" for d, t in top)}
    return len(found) / len(keys)


def rank_methods(
    services: Services, question: str, depth: int
) -> tuple[dict[str, list[str]], dict[str, float]]:
    """Chunk ids in ranked order for each method, and each method's time in ms (embedding excluded)."""
    emb = query_embedding(services, question)
    k = 40
    ranked: dict[str, list[str]] = {}
    ms: dict[str, float] = {}

    def timed(name: str, fn: Callable[[], list[str]]) -> None:
        t = time.perf_counter()
        ranked[name] = fn()
        ms[name] = (time.perf_counter() - t) * 1000

    def run(**overrides: Any) -> list[str]:
        opts = options_from_settings(services, 20, texts=False, **overrides)
        return [c.id for c in retrieve(services, question, opts, emb).candidates]

    def vector() -> list[str]:
        return [r["id"] for r in vector_search(services, emb, k)]

    timed("vector", vector)
    timed("bm25", lambda: [cid for cid, _ in lexical_search(services, question, k)])
    timed("hybrid", lambda: run(graph=False, depth=0, rerank=False))
    timed("hybrid+graph", lambda: run(depth=depth, graph=depth > 0, graph_mode="bonus"))
    timed("default", lambda: run(depth=max(depth, 1), graph=True))
    timed("multihop", lambda: run(depth=max(depth, 1), graph=True, graph_mode="multihop"))
    for signal in ABLATIONS:
        off = frozenset({signal})
        timed(f"multihop-{signal}", lambda off=off: run(  # type: ignore[misc]
            depth=max(depth, 1), graph=True, graph_mode="multihop", ablate=off))
    return ranked, ms


def evaluate(
    services: Services,
    questions: list[EvalQuestion],
    depth: int = 2,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    """Mean recall@{2,5,10} and p50 ms per method over ``questions`` (the graph must hold the corpus)."""
    index = {
        r["id"]: (str(r.get("doc_id") or r["id"]), str(r.get("title") or ""))
        for r in services.store.run("retrieval_chunk_index")
    }
    doc_ids = {d for d, _ in index.values()}
    sums = {m: {k: 0.0 for k in KS} for m in METHODS}
    times: dict[str, list[float]] = {m: [] for m in METHODS}
    t0 = time.perf_counter()
    for i, q in enumerate(questions, 1):
        keys = _support_keys(q, doc_ids)
        ranked, ms = rank_methods(services, q.question, depth)
        for m in METHODS:
            paras = _paragraphs(ranked[m], index)
            for k in KS:
                sums[m][k] += recall_at(paras, keys, k)
            times[m].append(ms[m])
        if progress:
            progress(i, len(questions))
    n = max(1, len(questions))
    return {
        "questions": len(questions),
        "chunks": len(index),
        "seconds": round(time.perf_counter() - t0, 2),
        "recall": {m: {f"@{k}": round(sums[m][k] / n, 4) for k in KS} for m in METHODS},
        "p50_ms": {m: round(statistics.median(times[m]), 2) if times[m] else 0.0 for m in METHODS},
        "graph_size": graph_size(services, len(index)),
        "default_graph_mode": resolve_graph_mode(services, services.settings.retrieval_graph_mode),
    }


def graph_size(services: Services, chunks: int) -> dict[str, Any]:
    """Relationships by type and per chunk."""
    by_type = {str(r["type"]): int(r["count"]) for r in services.store.run("count_rels_by_type")}
    total = sum(by_type.values())
    return {"relationships": total, "per_chunk": round(total / max(chunks, 1), 2), "by_type": by_type}


def beats_single(report: dict[str, Any], method: str = "default") -> bool:
    """Whether ``method`` has a higher recall@2 and @5 than every single retriever in this report."""
    r = report["recall"]
    return all(r[method][f"@{k}"] > r[s][f"@{k}"] for s in SINGLE for k in (2, 5))


def table(report: dict[str, Any]) -> str:
    """A plain-text ablation table: methods as rows, recall@k and p50 latency as columns."""
    lines = [f"{'method':<18}" + "".join(f"{'R@' + str(k):>8}" for k in KS) + f"{'p50 ms':>9}"]
    for m in METHODS:
        lines.append(f"{m:<18}" + "".join(f"{report['recall'][m][f'@{k}']:>8.3f}" for k in KS)
                     + f"{report.get('p50_ms', {}).get(m, 0.0):>9.1f}")
    if report.get("default_graph_mode"):
        lines.append(f"default graph mode: {report['default_graph_mode']}")
    g = report.get("graph_size")
    if g:
        lines.append(f"relationships: {g['relationships']} ({g['per_chunk']} per chunk) {g['by_type']}")
    ing = report.get("ingest")
    if ing and ing.get("elapsed_sec"):
        lines.append(f"ingest: {ing.get('chunks_new', 0)} chunks in {ing['elapsed_sec']:.1f} s "
                     f"({ing.get('chunks_new', 0) / ing['elapsed_sec']:.1f} chunks/s)")
    return "\n".join(lines)


def eval_settings(base: Settings, dataset: str, graph: str | None) -> Settings:
    """Settings with the evaluation's own graph (never the serving graph)."""
    return base.model_copy(update={"graph_name": graph or f"eval_{dataset}", "llm_base_url": None})
