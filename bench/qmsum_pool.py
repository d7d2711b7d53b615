"""Build a passage-retrieval pool from QMSum meeting transcripts: a real corpus without Wikipedia titles.

QMSum (Zhong et al., NAACL 2021; github.com/Yale-LILY/QMSum, MIT; transcripts from the AMI and ICSI
meeting corpora, CC BY 4.0, and Welsh / Canadian parliamentary committees) gives, per meeting, the
transcript as ``meeting_transcripts`` (``{speaker, content}`` turns) and ``specific_query_list`` questions
whose evidence is ``relevant_text_span``: inclusive ``[start, end]`` turn ranges, labelled by people.

    .venv/bin/python bench/qmsum_pool.py --source /work/data24/nonwiki/qmsum/data/ALL/test \\
        --out /work/data24/pools/qmsum_test
    neorag eval retrieval --dataset musique /work/data24/pools/qmsum_test --graph eval_qmsum_test

Passages are runs of consecutive turns of one meeting (``Speaker: words`` lines, transcription markup such
as ``{disfmarker}`` removed), closed once they hold ``--min-chars`` characters or before they would pass
``--max-chars`` (under the ingest chunk size, so a passage is one chunk unless a single turn is longer).
Every passage's title is its meeting's file name (``Bed003``, ``TS3004a``): a file name, never named by
another passage, so the app runs without title signals (``titles_usable`` false). A question's supporting
passages are those that overlap one of its spans; questions with more than ``--max-gold`` of them (spans
of hundreds of turns, closer to summaries) are left out, and the count is written to pool.json. All the
split's meetings share one pool. The output is in MuSiQue's format (``paragraphs`` with ``is_supporting``,
matched by title + text), which ``neorag eval retrieval --dataset musique`` reads. Nothing is fitted on it.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

MARKUP = re.compile(r"\{[a-z_]+\}")
SPACES = re.compile(r"\s+")


@dataclass(frozen=True)
class Passage:
    """Turns ``first``..``last`` (inclusive) of one meeting as one text."""

    meeting: str
    first: int
    last: int
    text: str


def clean_turn(turn: dict[str, Any]) -> str:
    """``Speaker: words`` of one turn without transcription markup ('' when only markup is left)."""
    words = SPACES.sub(" ", MARKUP.sub(" ", str(turn.get("content", "")))).strip()
    words = re.sub(r"\s+([.,?!])", r"\1", words)
    return f"{turn.get('speaker', '').strip()}: {words}" if words.strip(" .,?!") else ""


def passages_of(meeting: str, turns: list[dict[str, Any]], min_chars: int, max_chars: int) -> list[Passage]:
    """The meeting's turns grouped into passages (see the module docstring)."""
    out: list[Passage] = []
    lines: list[str] = []
    first = 0  # the current passage's first turn: filler-only turns belong to the passage they precede
    for i, turn in enumerate(turns):
        line = clean_turn(turn)
        if lines and line and sum(len(x) + 1 for x in lines) + len(line) > max_chars:
            out.append(Passage(meeting, first, i - 1, "\n".join(lines)))
            lines, first = [], i
        if line:
            lines.append(line)
        if sum(len(x) + 1 for x in lines) >= min_chars:
            out.append(Passage(meeting, first, i, "\n".join(lines)))
            lines, first = [], i + 1
    if lines:
        out.append(Passage(meeting, first, len(turns) - 1, "\n".join(lines)))
    elif out and first < len(turns):  # trailing filler-only turns: the last passage's
        out[-1] = replace(out[-1], last=len(turns) - 1)
    return out


def spans_of(query: dict[str, Any]) -> list[tuple[int, int]]:
    """A query's evidence spans as inclusive turn ranges (QMSum stores them as strings)."""
    return [(int(a), int(b)) for a, b in query.get("relevant_text_span", [])]


def supporting(passages: list[Passage], spans: list[tuple[int, int]]) -> list[Passage]:
    """The passages overlapping any of ``spans``."""
    return [p for p in passages if any(p.first <= b and a <= p.last for a, b in spans)]


def build(files: list[Path], min_chars: int, max_chars: int, max_gold: int) -> dict[str, Any]:
    """Questions (MuSiQue format), corpus and counts of the meetings in ``files``."""
    corpus: list[dict[str, str]] = []
    questions: list[dict[str, Any]] = []
    dropped = 0
    for path in files:
        meeting = path.stem
        data = json.loads(path.read_text(encoding="utf-8"))
        passages = passages_of(meeting, data["meeting_transcripts"], min_chars, max_chars)
        corpus.extend({"title": meeting, "text": p.text} for p in passages)
        for n, query in enumerate(data.get("specific_query_list", [])):
            gold = supporting(passages, spans_of(query))
            if not gold or len(gold) > max_gold:
                dropped += 1
                continue
            questions.append({
                "id": f"{meeting}#{n}", "question": query["query"], "answer": query.get("answer", ""),
                "paragraphs": [{"idx": k, "title": meeting, "paragraph_text": p.text, "is_supporting": True}
                               for k, p in enumerate(gold)],
            })
    return {"questions": questions, "corpus": corpus, "dropped": dropped}


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Write ``meetings.json``, ``meetings_corpus.json`` and ``pool.json`` into ``--out``."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--source", required=True, type=Path, help="a QMSum split folder (one JSON per meeting)")
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--min-chars", type=int, default=400)
    ap.add_argument("--max-chars", type=int, default=700)
    ap.add_argument("--max-gold", type=int, default=10,
                    help="leave out questions with more supporting passages")
    ap.add_argument("--origin", default="Yale-LILY/QMSum@83d7768c1f2b4dfeb091385d3dc7e239b8e5bb7e")
    args = ap.parse_args(argv)
    files = sorted(args.source.glob("*.json"))
    if not files:
        ap.error(f"no meeting files (*.json) in {args.source}")
    pool = build(files, args.min_chars, args.max_chars, args.max_gold)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "meetings.json").write_text(json.dumps(pool["questions"]), encoding="utf-8")
    (args.out / "meetings_corpus.json").write_text(json.dumps(pool["corpus"]), encoding="utf-8")
    gold = [len(q["paragraphs"]) for q in pool["questions"]]
    meta = {
        "dataset": "qmsum", "origin": args.origin, "split": args.source.name,
        "meetings": len(files), "passages": len(pool["corpus"]), "questions": len(pool["questions"]),
        "questions_left_out": pool["dropped"], "max_gold": args.max_gold,
        "mean_supporting": round(sum(gold) / max(len(gold), 1), 2),
        "min_chars": args.min_chars, "max_chars": args.max_chars,
        "sources": [{"path": str(p), "sha256": hashlib.sha256(p.read_bytes()).hexdigest()} for p in files],
    }
    (args.out / "pool.json").write_text(json.dumps(meta, indent=2), encoding="utf-8")
    print(json.dumps({k: v for k, v in meta.items() if k != "sources"}))
    return meta


if __name__ == "__main__":
    main()
