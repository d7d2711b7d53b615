"""Markdown-aware chunking: recall with and without heading paths, on Markdown-ised HotpotQA / MuSiQue.

Run: .venv/bin/python bench/markdown_sections.py --dataset hotpotqa [--files 50] [--json-out F]

The dataset's paragraphs are shuffled (seed 13) into ``--files`` Markdown files, one ``## <paragraph
title>`` section per paragraph under a ``# Notes, part <k>`` heading, as a wiki export would look. The
same files are ingested three times (no LLM, default chunk size 800 / overlap 120), each into its own graph:

  plain     Markdown chunked like plain text (NeoRAG before issue 16): chunks run across headings, the
            heading lines sit inside the chunk text;
  sections  chunked section by section, the heading line dropped and NOT used for retrieval (ablation);
  paths     chunked section by section, the heading path ("Notes, part 3 > Leland, North Carolina")
            embedded and BM25-indexed with every chunk (NeoRAG's default now).

For each of the dataset's questions every method ranks chunks (vector, bm25, hybrid, hybrid+graph: the
same rankers as ``neorag eval retrieval``). A chunk covers a supporting paragraph when its cited line range
(the chunk's ``location``) overlaps that paragraph's section; recall is the share of supporting paragraphs
covered by the top-k chunks, and by the best chunks that fit a 4,000-character context (chunks differ in
length between variants). Nothing here is used by tests; it reads /work/shared/data.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("NEORAG_EMBEDDING_QUERY_PRECISION", "fp32")

from app.core.config import Settings  # noqa: E402
from app.evaluation.retrieval_eval import METHODS, rank_methods  # noqa: E402
from app.services.container import build_services  # noqa: E402
from app.store.embedded import EmbeddedServer  # noqa: E402
from ingest.options import IngestOptions  # noqa: E402
from ingest.pipeline import ingest_path  # noqa: E402

DATA = Path("/work/shared/data")
KS = (2, 5, 10)
BUDGET = 4000
VARIANTS = ("plain", "sections", "paths")
Section = tuple[str, int, int]  # (paragraph key, first line, last line)


def load(dataset: str, data: Path) -> tuple[list[tuple[str, str]], list[dict[str, Any]]]:
    """Paragraphs (title, text) and questions {question, support: [paragraph key]}; key = title + index."""
    if dataset == "hotpotqa":
        corpus = json.loads((data / "hotpotqa-train100/hotpotqa_train_corpus.json").read_text())
        paras = [(t, "".join(s).strip()) for t, s in corpus.items()]
        qs = json.loads((data / "hotpotqa-train100/hotpotqa_train.json").read_text())
        questions = [{"question": q["question"], "support": sorted({t for t, _ in q["supporting_facts"]})}
                     for q in qs]
        return paras, questions
    corpus = json.loads((data / "musique-train100/musique_train_corpus.json").read_text())
    paras = [(p["title"], p["text"].strip()) for p in corpus]
    qs = json.loads((data / "musique-train100/musique_train.json").read_text())
    questions = [{"question": q["question"],
                  "support": sorted({p["title"] for p in q["paragraphs"] if p.get("is_supporting")})}
                 for q in qs]
    return paras, questions


def write_markdown(paras: list[tuple[str, str]], folder: Path, files: int) -> dict[str, list[Section]]:
    """The corpus as Markdown files; returns each file's sections (title, first line, last line)."""
    order = list(range(len(paras)))
    random.Random(13).shuffle(order)
    layout: dict[str, list[Section]] = {}
    for k in range(files):
        part = order[k::files]
        lines = [f"# Notes, part {k + 1}", ""]
        sections: list[Section] = []
        for i in part:
            title, text = paras[i]
            first = len(lines) + 1
            lines += [f"## {title}", "", text, ""]
            sections.append((title, first, len(lines) - 1))
        path = folder / f"notes-{k + 1:03d}.md"
        path.write_text("\n".join(lines), encoding="utf-8")
        layout[str(path.resolve())] = sections
    return layout


@contextmanager
def no_paths(active: bool) -> Iterator[None]:
    """The 'sections' ablation: section chunks without heading paths (nothing embedded or indexed)."""
    import ingest.chunk as chunk

    original = chunk.section_path
    if active:
        chunk.section_path = lambda path: None  # type: ignore[assignment]
    try:
        yield
    finally:
        chunk.section_path = original  # type: ignore[assignment]


def coverage(services: Any, layout: dict[str, list[Section]]) -> dict[str, tuple[set[str], int]]:
    """Chunk id -> (paragraph titles its line range overlaps, its length in characters)."""
    rows = services.store.run("retrieval_chunk_index")
    ids = [r["id"] for r in rows]
    out: dict[str, tuple[set[str], int]] = {}
    for i in range(0, len(ids), 500):
        for r in services.store.run("chunk_get_by_ids", {"ids": ids[i:i + 500]}):
            a, b = r.get("line_start"), r.get("line_end")
            sections = layout.get(str(r["source"]), [])
            titles = {t for t, s, e in sections if a is not None and s <= b and a <= e}
            out[str(r["id"])] = (titles, len(r.get("text") or ""))
    return out


def recall(ranked: list[str], cover: dict[str, tuple[set[str], int]], support: set[str]) -> dict[str, float]:
    """Share of supporting paragraphs covered by the top-k chunks and by a BUDGET-character context."""
    out = {}
    for k in KS:
        got = set().union(*(cover.get(c, (set(), 0))[0] for c in ranked[:k]))
        out[f"@{k}"] = len(got & support) / len(support)
    got, used = set(), 0
    for c in ranked:
        titles, size = cover.get(c, (set(), 0))
        if used + size > BUDGET:
            break
        used += size
        got |= titles
    out[f"@{BUDGET}ch"] = len(got & support) / len(support)
    return out


def run_variant(name: str, base: Settings, folder: Path, layout: dict[str, list[Section]],
                questions: list[dict[str, Any]]) -> dict[str, Any]:
    settings = base.model_copy(update={"graph_name": f"md_{name}_{int(time.time())}"})
    services = build_services(settings, start_embedded=False)
    try:
        t0 = time.perf_counter()
        with no_paths(name == "sections"):
            result = ingest_path(services, folder, IngestOptions(
                markdown_sections=name != "plain", llm_relations=False, checkpoint=False))
        ingest_s = time.perf_counter() - t0
        cover = coverage(services, layout)
        sums = {m: {} for m in METHODS}  # type: dict[str, dict[str, float]]
        for q in questions:
            support = set(q["support"])
            for m, ranked in rank_methods(services, q["question"], 2).items():
                for key, value in recall(ranked, cover, support).items():
                    sums[m][key] = sums[m].get(key, 0.0) + value
        n = len(questions)
        sizes = [size for _, size in cover.values()]
        return {"chunks": result.chunks_total, "mean_chunk_chars": round(sum(sizes) / max(1, len(sizes))),
                "ingest_s": round(ingest_s, 1),
                "recall": {m: {k: round(v / n, 4) for k, v in sums[m].items()} for m in METHODS}}
    finally:
        services.store.run("graph_clear")
        services.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", choices=("hotpotqa", "musique"), default="hotpotqa")
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--files", type=int, default=50)
    parser.add_argument("--limit", type=int, default=0, help="first N questions (0 = all)")
    parser.add_argument("--json-out", type=Path)
    args = parser.parse_args()
    paras, questions = load(args.dataset, args.data)
    questions = questions[: args.limit or None]
    tmp = Path(tempfile.mkdtemp(prefix="neorag-md-bench-"))
    folder = tmp / "corpus"
    folder.mkdir()
    layout = write_markdown(paras, folder, args.files)
    server = EmbeddedServer(tmp / "db")
    info = server.start()
    try:
        base = Settings(backend="embedded", falkor_data_dir=info.data_dir, falkor_port=info.port,
                        llm_base_url=None)
        report: dict[str, Any] = {"dataset": args.dataset, "paragraphs": len(paras), "files": args.files,
                                  "questions": len(questions), "load_before": os.getloadavg(), "variants": {}}
        for name in VARIANTS:
            report["variants"][name] = run_variant(name, base, folder, layout, questions)
            print(name, json.dumps(report["variants"][name]), flush=True)
        report["load_after"] = os.getloadavg()
    finally:
        server.stop()
    cols = [f"@{k}" for k in KS] + [f"@{BUDGET}ch"]
    print(f"{'variant':<10}{'method':<14}" + "".join(f"{c:>9}" for c in cols))
    for name in VARIANTS:
        for m in METHODS:
            row = report["variants"][name]["recall"][m]
            print(f"{name:<10}{m:<14}" + "".join(f"{row[c]:>9.3f}" for c in cols))
    if args.json_out:
        args.json_out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
