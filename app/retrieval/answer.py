"""Sources, prompts, extractive answers and citation warnings for POST /query."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from app.retrieval.scoring import Candidate
from app.retrieval.text import query_terms, sentences, tokenize

_CITE = re.compile(r"\[S(\d+)\]")
_NUMBER = re.compile(r"(?<![\w\[])(?:\d[\d,]*(?:\.\d+)?%?)(?![\w\]])")

SYSTEM_PROMPT = (
    "You answer questions using ONLY the numbered sources provided. After every sentence that uses a source, "
    "cite it with its marker, for example [S1] or [S2][S3]. Cite numbers and dates too. "
    "If the sources do not contain the answer, say so briefly. Be concise."
)


@dataclass
class ContextItem:
    """One external context item from the request."""

    id: str
    text: str
    score: float | None = None


def round6(x: float | None) -> float | None:
    return None if x is None else round(float(x), 6)


def graph_source(c: Candidate, rank: int) -> dict[str, Any]:
    """A retrieved chunk as a /query source."""
    return {
        "id": c.id,
        "rank": rank,
        "reason": c.reason,
        "reasons": list(c.reasons),
        "score": round6(c.final),
        "score_raw": round6(c.score_raw),
        "base_norm": round6(c.base_norm),
        "bonus": round6(c.bonus),
        "composite_score": round6(c.composite),
        "rel_type": c.rel_type,
        "rel_conf": round6(c.rel_conf),
        "title": c.title,
        "doc_id": c.doc_id,
        "text": c.text,
    }


def external_source(item: ContextItem, rank: int) -> dict[str, Any]:
    """An external context item as a /query source (reason=external)."""
    score = 1.0 if item.score is None else float(item.score)
    return {
        "id": item.id,
        "rank": rank,
        "reason": "external",
        "reasons": ["external"],
        "score": round6(score),
        "score_raw": None,
        "base_norm": None,
        "bonus": None,
        "composite_score": round6(score),
        "rel_type": None,
        "rel_conf": None,
        "title": None,
        "doc_id": None,
        "text": item.text,
    }


def references(sources: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """S# labels for every ranked source."""
    return [
        {
            "label": f"S{s['rank']}",
            "id": s["id"],
            "score": s["score"],
            "composite_score": s["composite_score"],
        }
        for s in sources
        if s.get("rank")
    ]


def messages(
    question: str,
    sources: list[dict[str, Any]],
    history: list[dict[str, str]],
    max_chars_per_source: int = 1200,
) -> list[dict[str, str]]:
    """Chat messages: system rules, the conversation so far, then sources + question."""
    blocks = []
    for s in sources:
        title = f" ({s['title']})" if s.get("title") else ""
        blocks.append(f"[S{s['rank']}]{title} {s['text'][:max_chars_per_source]}")
    body = "Sources:\n" + ("\n\n".join(blocks) if blocks else "(none)") + f"\n\nQuestion: {question}"
    return [{"role": "system", "content": SYSTEM_PROMPT}, *history, {"role": "user", "content": body}]


def extractive_answer(question: str, sources: list[dict[str, Any]], max_sentences: int = 3) -> str:
    """The best-matching sentences of the top sources, each with its [S#] marker."""
    terms = set(query_terms(question))
    scored: list[tuple[float, int, int, str, int]] = []
    for pos, s in enumerate(sources[:5]):
        for i, sent in enumerate(sentences(s.get("text") or "")):
            overlap = len(terms & set(tokenize(sent)))
            scored.append((overlap + 1.0 / (1 + pos) * 0.5 - 0.01 * i, s["rank"], i, sent, overlap))
    if not scored:
        return "No sources were found for this question."
    ranked = sorted(scored, key=lambda x: -x[0])
    # keep the best sentence, then only sentences at least half as on-topic (question-term overlap)
    floor = max(1, ranked[0][4] / 2)
    best = [ranked[0]] + [x for x in ranked[1:] if x[4] >= floor][: max_sentences - 1]
    best.sort(key=lambda x: (x[1], x[2]))
    return " ".join(f"{sent.rstrip()} [S{rank}]" for _, rank, _, sent, _ in best)


def cited(answer: str) -> set[int]:
    return {int(m) for m in _CITE.findall(answer)}


def warnings_for(answer: str, sources: list[dict[str, Any]]) -> list[dict[str, str]]:
    """unused_sources (ranked sources never cited) and unreferenced_numeric (numbers in uncited sentences)."""
    out: list[dict[str, str]] = []
    used = cited(answer)
    unused = [f"S{s['rank']}" for s in sources if s.get("rank") and s["rank"] not in used]
    if unused and sources:
        out.append(
            {
                "type": "unused_sources",
                "detail": "sources provided but not cited in the answer: " + ", ".join(unused),
            }
        )
    for sent in sentences(answer):
        if _CITE.search(sent):
            continue
        for num in _NUMBER.findall(sent):
            out.append(
                {"type": "unreferenced_numeric", "detail": f"number '{num}' may need a citation marker"}
            )
    return out
