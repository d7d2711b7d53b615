"""Build evaluation pools from TRAIN questions of HotpotQA, 2WikiMultihopQA or MuSiQue (issue 24).

    .venv/bin/python bench/train_pools.py --dataset hotpotqa --source /work/data24/src/hotpotqa \\
        --out /work/data24/pools/hotpotqa_10k --questions 1000 --passages 10000 [--no-titles] \\
        [--held-out 0.5] [--seed 24] [--origin "owner/repo@commit:path, split train"]
    neorag eval retrieval --dataset hotpotqa /work/data24/pools/hotpotqa_10k --graph eval_tp_hp10k
    neorag eval retrieval --dataset hotpotqa DIR --graph eval_tp_hp10k --reuse --limit F   # fit part
    neorag eval retrieval --dataset hotpotqa DIR --graph eval_tp_hp10k --reuse --skip F    # held-out part

With ``--corpus FILE`` (``[{title, text | content}]``), HotpotQA / 2Wiki records that carry only
``supporting_facts`` (no ``context``) take their supporting paragraphs from that corpus, and every corpus
passage is a candidate distractor: the pool is the questions' supporting paragraphs plus the corpus's other
passages in hash order, all of them when ``--passages`` is 0 (a corpus that is the union of the questions'
contexts then gives HippoRAG 2's setting; a smaller ``--passages`` samples distractors from the whole corpus,
not from each question's own context, so it is easier than a pool built from contexts).

``--source`` takes files or folders (``*.json``, ``*.jsonl``, optionally ``.gz``; ``*_corpus.json`` files are
skipped) in any of these record formats: HotpotQA / 2Wiki originals (``context`` as ``[title, sentences]``
pairs, ``supporting_facts`` as ``[title, sent]``), the Hugging Face HotpotQA layout (``context`` /
``supporting_facts`` as column dicts), MuSiQue (``paragraphs`` with ``is_supporting``; MuSiQue-Full's
unanswerable questions are dropped) and IRCoT's processed files (``contexts`` with ``is_supporting``).
Questions are de-duplicated by id.

Every question gets a fixed place from a seeded hash of its id (independent of the source's order), and
the same hash puts it in the *fit* part or the *held-out* part, so a question never changes sides between
pool sizes or runs, and a smaller pool's questions are the first ones of a bigger pool. A pool of
``--passages T`` takes questions in that order, with all their paragraphs, while the union stays within T
(and at most ``--questions N``), then fills up to exactly T with paragraphs of further questions, which are
not evaluated (``--passages 0``: N questions and all their paragraphs, HippoRAG 2's setting). HotpotQA and
2Wiki passages are keyed by title (the first text of a title is kept, as the evaluator matches supporting
paragraphs by title); MuSiQue passages by title + text (its paragraphs share titles).

Writes into ``--out``: ``<dataset>_train_pool.json`` (the questions, fit part first, in the format
``neorag eval retrieval --dataset`` reads), ``<dataset>_train_pool_corpus.json`` (``[{title, text}]``)
and ``pool.json`` (counts, split, seed, the sources' sha256 and ``--origin``, the commands). With
``--no-titles`` every passage's title is replaced by an id (``p000001`` ...) in the corpus and in the
questions alike, so title signals cannot help. Data stays out of the repository (bench/datasets/README.md).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DATASETS = ("hotpotqa", "musique", "2wiki")


@dataclass
class Paragraph:
    """One context paragraph of a question."""

    title: str
    text: str
    supporting: bool


@dataclass
class Question:
    """A train question, normalised from any supported source format."""

    id: str
    question: str
    answer: str
    paragraphs: list[Paragraph]
    extra: dict[str, Any] = field(default_factory=dict)


def join_sentences(sentences: list[str] | str) -> str:
    """One paragraph from a sentence list (HotpotQA's sentences carry their leading space, 2Wiki's not)."""
    if isinstance(sentences, str):
        return sentences.strip()
    out = ""
    for s in sentences:
        if out and not out[-1].isspace() and s and not s[0].isspace():
            out += " "
        out += s
    return out.strip()


def _answer(rec: dict[str, Any]) -> str:
    ans = rec.get("answer", "")
    if isinstance(ans, list):
        ans = ans[0] if ans else ""
    objs = rec.get("answers_objects")
    if not ans and objs:
        spans = objs[0].get("spans") or []
        ans = spans[0] if spans else ""
    return str(ans)


def normalise(rec: dict[str, Any], corpus: dict[str, str] | None = None) -> Question | None:
    """A Question from one source record, or None when the record has no supporting paragraph or is a
    MuSiQue-Full unanswerable question. A HotpotQA / 2Wiki record without ``context`` takes its supporting
    paragraphs from ``corpus`` (title -> text; None when a title is missing there). Raises ValueError for an
    unknown record layout."""
    if "paragraphs" in rec:  # MuSiQue
        if rec.get("answerable") is False:
            return None
        paras = [Paragraph(str(p.get("title", "")), str(p.get("paragraph_text", p.get("text", ""))).strip(),
                           bool(p.get("is_supporting"))) for p in rec["paragraphs"]]
        extra: dict[str, Any] = {k: rec[k] for k in ("answer_aliases", "question_decomposition") if k in rec}
        q = Question(str(rec["id"]), rec["question"], _answer(rec), paras, extra)
    elif "contexts" in rec:  # IRCoT processed_data
        paras = [Paragraph(str(c["title"]), str(c["paragraph_text"]).strip(), bool(c.get("is_supporting")))
                 for c in rec["contexts"]]
        q = Question(str(rec["question_id"]), rec["question_text"], _answer(rec), paras)
    elif "supporting_facts" in rec and "context" not in rec and corpus is not None:  # + a shared corpus
        titles = list(dict.fromkeys(t for t, _ in rec["supporting_facts"]))
        if not all(t in corpus for t in titles):
            return None
        q = Question(str(rec.get("_id", rec.get("id"))), rec["question"], _answer(rec),
                     [Paragraph(t, corpus[t], True) for t in titles],
                     {str(k): rec[k] for k in ("type",) if k in rec})
    elif "context" in rec and "supporting_facts" in rec:
        ctx, sf = rec["context"], rec["supporting_facts"]
        if isinstance(ctx, dict):  # Hugging Face layout: column dicts
            pairs = list(zip(ctx["title"], ctx.get("sentences") or ctx.get("content") or [], strict=True))
            support = set(sf["title"])
        else:
            pairs = [(p[0], p[1]) for p in ctx]
            support = {t for t, _ in sf}
        paras = [Paragraph(str(t), join_sentences(s), t in support) for t, s in pairs]
        extra = {str(k): rec[k] for k in ("type", "level", "evidences") if k in rec}
        q = Question(str(rec.get("_id", rec.get("id"))), rec["question"], _answer(rec), paras, extra)
    else:
        raise ValueError(f"unknown record layout (keys: {', '.join(sorted(rec)[:8])})")
    q.paragraphs = [p for p in q.paragraphs if p.text]
    return q if any(p.supporting for p in q.paragraphs) else None


def _records(path: Path) -> list[dict[str, Any]]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as fh:  # type: ignore[operator]
        text = fh.read()
    name = path.name[:-3] if path.suffix == ".gz" else path.name
    if name.endswith(".jsonl"):
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    data = json.loads(text)
    return data if isinstance(data, list) else [data]


def source_files(sources: list[Path]) -> list[Path]:
    """The question files named by ``--source`` (folders expanded, corpus files skipped), sorted."""
    out: list[Path] = []
    for src in sources:
        if src.is_dir():
            found = [p for p in sorted(src.rglob("*")) if p.is_file()
                     and p.name.endswith((".json", ".jsonl", ".json.gz", ".jsonl.gz"))]
        elif src.is_file():
            found = [src]
        else:
            raise SystemExit(f"--source {src}: no such file or folder")
        out += [p for p in found if "_corpus.json" not in p.name]
    if not out:
        raise SystemExit("no question files (*.json, *.jsonl) under --source")
    return out


def load_corpus(path: Path) -> dict[str, str]:
    """A shared corpus ``[{title, text | content | paragraph_text}]`` (text or sentence list) as title -> text
    (the first text of a title kept)."""
    out: dict[str, str] = {}
    for rec in _records(path):
        body = next((rec[k] for k in ("text", "content", "paragraph_text", "sentences") if k in rec), None)
        if body is None:
            raise SystemExit(f"--corpus {path}: a record has no text field")
        text = join_sentences(body)
        if text:
            out.setdefault(str(rec.get("title", "")), text)
    return out


def load_questions(files: list[Path], corpus: dict[str, str] | None = None) -> list[Question]:
    """Every usable question of ``files``, de-duplicated by id (first kept)."""
    seen: set[str] = set()
    out = []
    for path in files:
        for rec in _records(path):
            q = normalise(rec, corpus)
            if q is not None and q.id not in seen:
                seen.add(q.id)
                out.append(q)
    return out


def rank(qid: str, seed: int) -> float:
    """A question's fixed place in [0, 1): a seeded hash of its id."""
    return int(hashlib.sha256(f"{seed}:{qid}".encode()).hexdigest()[:15], 16) / 16**15


def is_held_out(qid: str, seed: int, share: float) -> bool:
    """Held-out side of the split (its own hash, independent of the place)."""
    return rank(f"split:{qid}", seed) < share


def passage_key(dataset: str, p: Paragraph) -> tuple[str, ...]:
    """HotpotQA / 2Wiki passages are one per title; MuSiQue's by title and text."""
    return (p.title,) if dataset in ("hotpotqa", "2wiki") else (p.title, p.text)


@dataclass
class Pool:
    """Evaluated questions (in pool order) and the corpus passages (title, text)."""

    questions: list[Question]
    passages: list[tuple[str, str]]
    fillers: int  # questions whose paragraphs only fill the pool


def build_pool(dataset: str, questions: list[Question], seed: int, max_questions: int,
               target: int, shared: dict[str, str] | None = None) -> Pool:
    """Questions in hash order with all their paragraphs while the union fits ``target`` (and at most
    ``max_questions``), then paragraphs of further questions up to exactly ``target`` (0: no bound), then
    the ``shared`` corpus's passages in hash order (all of them when ``target`` is 0)."""
    ordered = sorted(questions, key=lambda q: (rank(q.id, seed), q.id))
    keys: dict[tuple[str, ...], tuple[str, str]] = {}
    chosen: list[Question] = []
    rest = iter(ordered)
    for q in rest:
        new = {passage_key(dataset, p): (p.title, p.text) for p in q.paragraphs}
        new = {k: v for k, v in new.items() if k not in keys}
        if (target and len(keys) + len(new) > target) or (max_questions and len(chosen) >= max_questions):
            leftover = [q]
            break
        keys.update(new)
        chosen.append(q)
    else:
        leftover = []
    fillers = 0
    for q in [*leftover, *rest]:
        if not target or len(keys) >= target:
            break
        fillers += 1
        for p in q.paragraphs:
            if len(keys) >= target:
                break
            keys.setdefault(passage_key(dataset, p), (p.title, p.text))
    for title in sorted(shared or {}, key=lambda t: (rank(f"passage:{t}", seed), t)):
        if target and len(keys) >= target:
            break
        keys.setdefault(passage_key(dataset, Paragraph(title, (shared or {})[title], False)),
                        (title, (shared or {})[title]))
    return Pool(chosen, list(keys.values()), fillers)


def split_questions(pool: Pool, seed: int, held_out: float) -> tuple[list[Question], list[Question]]:
    """(fit, held-out) questions of the pool, each in pool order."""
    fit = [q for q in pool.questions if not is_held_out(q.id, seed, held_out)]
    out = [q for q in pool.questions if is_held_out(q.id, seed, held_out)]
    return fit, out


def title_ids(dataset: str, pool: Pool) -> dict[tuple[str, ...], str]:
    """Passage key -> id (``p000001`` ... in corpus order) for ``--no-titles``."""
    return {passage_key(dataset, Paragraph(t, x, False)): f"p{i:06d}"
            for i, (t, x) in enumerate(pool.passages, 1)}


def _title(dataset: str, p: Paragraph, ids: dict[tuple[str, ...], str] | None) -> str:
    return ids.get(passage_key(dataset, p), p.title) if ids is not None else p.title


def question_record(dataset: str, q: Question, ids: dict[tuple[str, ...], str] | None) -> dict[str, Any]:
    """The question in the format ``neorag eval retrieval --dataset`` reads (titles mapped when ``ids``)."""
    if dataset == "musique":
        paras = [{"idx": i, "title": _title(dataset, p, ids), "paragraph_text": p.text,
                  "is_supporting": p.supporting} for i, p in enumerate(q.paragraphs)]
        return {"id": q.id, "question": q.question, "answer": q.answer, "paragraphs": paras, **q.extra}
    support = [p for p in q.paragraphs if p.supporting]
    return {"_id": q.id, "question": q.question, "answer": q.answer,
            "supporting_facts": [[_title(dataset, p, ids), 0] for p in support],
            "context": [[_title(dataset, p, ids), [p.text]] for p in q.paragraphs], **q.extra}


def corpus_records(dataset: str, pool: Pool, ids: dict[tuple[str, ...], str] | None) -> list[dict[str, str]]:
    """``[{title, text}]`` of the pool's passages (titles mapped when ``ids``)."""
    return [{"title": _title(dataset, Paragraph(t, x, False), ids), "text": x} for t, x in pool.passages]


def sha256_of(path: Path) -> str:
    """Hex sha256 of a file's bytes."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def write_pool(args: argparse.Namespace, files: list[Path], questions: list[Question]) -> dict[str, Any]:
    """Build, split and write one pool; returns its manifest."""
    shared = load_corpus(args.corpus) if args.corpus else None
    pool = build_pool(args.dataset, questions, args.seed, args.questions, args.passages, shared)
    fit, held = split_questions(pool, args.seed, args.held_out)
    ids = title_ids(args.dataset, pool) if args.no_titles else None
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    stem = f"{args.dataset}_train_pool"
    records = [question_record(args.dataset, q, ids) for q in [*fit, *held]]
    (out / f"{stem}.json").write_text(json.dumps(records, ensure_ascii=False), encoding="utf-8")
    corpus = corpus_records(args.dataset, pool, ids)
    (out / f"{stem}_corpus.json").write_text(json.dumps(corpus, ensure_ascii=False), encoding="utf-8")
    graph = args.graph or f"eval_tp_{args.dataset}_{out.name}"
    run = f"neorag eval retrieval --dataset {args.dataset} {out} --graph {graph}"
    manifest = {
        "dataset": args.dataset, "split": "train", "origin": args.origin, "seed": args.seed,
        "sources": [{"path": str(p), "sha256": sha256_of(p)} for p in files],
        "corpus": {"path": str(args.corpus), "sha256": sha256_of(args.corpus)} if args.corpus else None,
        "source_questions": len(questions), "questions": len(records), "fit": len(fit), "held_out": len(held),
        "held_out_share": args.held_out, "filler_questions": pool.fillers, "passages": len(corpus),
        "target_passages": args.passages, "max_questions": args.questions, "no_titles": args.no_titles,
        "order": "fit questions first, then held-out; sha256(seed:id) places questions, "
                 "sha256(seed:split:id) splits",
        "commands": {"all": run, "fit": f"{run} --reuse --limit {len(fit)}",
                     "held_out": f"{run} --reuse --skip {len(fit)}"},
    }
    (out / "pool.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return manifest


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dataset", required=True, choices=DATASETS)
    ap.add_argument("--source", required=True, nargs="+", type=Path, help="train question files or folders")
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--questions", type=int, default=1000, help="at most N evaluated questions (0: no bound)")
    ap.add_argument("--passages", type=int, default=0,
                    help="pool size in passages (0: the N questions' paragraphs)")
    ap.add_argument("--held-out", type=float, default=0.5, help="share of questions held out from fitting")
    ap.add_argument("--seed", type=int, default=24)
    ap.add_argument("--no-titles", action="store_true", help="replace every passage title by an id")
    ap.add_argument("--corpus", type=Path, default=None,
                    help="shared corpus for questions without context (HotpotQA / 2Wiki supporting_facts)")
    ap.add_argument("--origin", default="", help="where the source came from (repo@commit:path, split)")
    ap.add_argument("--graph", default="", help="graph name for the printed commands")
    args = ap.parse_args(argv)
    if not 0 <= args.held_out <= 1:
        ap.error("--held-out must be within 0 and 1")
    if args.questions < 0 or args.passages < 0 or (args.questions == 0 and args.passages == 0):
        ap.error("--questions and --passages must be >= 0, and not both 0")
    return args


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Entry point: prints and returns the manifest."""
    args = parse_args(argv)
    files = [p for p in source_files(args.source) if not args.corpus or p.resolve() != args.corpus.resolve()]
    questions = load_questions(files, load_corpus(args.corpus) if args.corpus else None)
    manifest = write_pool(args, files, questions)
    print(json.dumps({k: manifest[k] for k in ("dataset", "source_questions", "questions", "fit", "held_out",
                                                "filler_questions", "passages", "no_titles")}))
    if manifest["passages"] < args.passages:
        print(f"warning: only {manifest['passages']} passages available (asked {args.passages})",
              file=sys.stderr)
    return manifest


if __name__ == "__main__":
    main()
