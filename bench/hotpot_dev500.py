"""Unpack the 500-question HotpotQA dev sample in bench/datasets into `neorag eval retrieval`'s format.

    .venv/bin/python bench/hotpot_dev500.py /tmp/hp500
    neorag eval retrieval --dataset hotpotqa /tmp/hp500 --graph eval_hp500 --json-out hp500.json

Writes ``hotpotqa_dev500.json`` (HotpotQA's format: ``_id``, ``question``, ``answer``,
``supporting_facts`` as ``[title, 0]`` per supporting paragraph, ``context``) and
``hotpotqa_dev500_corpus.json`` (``[{title, text}]``: the union of every question's context paragraphs,
first occurrence kept, 4,858 paragraphs). Source and licence: bench/datasets/README.md.
"""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path

SAMPLE = Path(__file__).resolve().parent / "datasets" / "hotpotqa_dev500_ircot.jsonl.gz"


def convert(records: list[dict]) -> tuple[list[dict], list[dict]]:
    """(questions, corpus) from IRCoT's processed records."""
    questions, corpus, seen = [], [], set()
    for rec in records:
        contexts = rec["contexts"]
        spans = rec["answers_objects"][0]["spans"] if rec["answers_objects"] else []
        questions.append({
            "_id": rec["question_id"],
            "question": rec["question_text"],
            "supporting_facts": [[c["title"], 0] for c in contexts if c["is_supporting"]],
            "context": [[c["title"], [c["paragraph_text"]]] for c in contexts],
            "answer": spans[0] if spans else "",
        })
        for c in contexts:
            if c["title"] not in seen:
                seen.add(c["title"])
                corpus.append({"title": c["title"], "text": c["paragraph_text"]})
    return questions, corpus


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    with gzip.open(SAMPLE, "rt", encoding="utf-8") as fh:
        records = [json.loads(line) for line in fh if line.strip()]
    questions, corpus = convert(records)
    (out / "hotpotqa_dev500.json").write_text(json.dumps(questions, ensure_ascii=False), encoding="utf-8")
    (out / "hotpotqa_dev500_corpus.json").write_text(json.dumps(corpus, ensure_ascii=False), encoding="utf-8")
    print(f"{len(questions)} questions, {len(corpus)} paragraphs -> {out}")


if __name__ == "__main__":
    main()
