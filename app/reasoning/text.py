"""Small text helpers shared by the agents: tokens, BM25 ranking, reply parsing."""

from __future__ import annotations

import re
from collections.abc import Sequence

_TOKEN = re.compile(r"[a-z0-9]+")
_STOP = frozenset(
    "a an the of in on at to is was what which who whom whose where when how why does did do "
    "are be by for from with as and or 's s".split()
)


def tokens(text: str) -> list[str]:
    """Lower-case word tokens; dotted / underscored ids split into words; stop words dropped."""
    return [t for t in _TOKEN.findall(text.lower().replace("_", " ").replace(".", " ")) if t not in _STOP]


def bm25_rank(query: str, docs: Sequence[str]) -> list[tuple[int, float]]:
    """(index, score) of ``docs`` by BM25 against ``query``, best first; ties keep input order."""
    if not docs:
        return []
    from rank_bm25 import BM25Plus

    corpus = [tokens(d) or ["_"] for d in docs]
    # BM25+ keeps idf positive (log((N+1)/n)), so tiny candidate sets (a few relations) still rank sensibly.
    scores = BM25Plus(corpus).get_scores(tokens(query) or ["_"])
    q = set(tokens(query))
    overlap = [len(q & set(c)) for c in corpus]
    order = sorted(range(len(docs)), key=lambda i: (-float(scores[i]), -overlap[i], i))
    return [(i, float(scores[i])) for i in order]


def squash(text: str) -> str:
    """Lower-case, underscores as spaces, whitespace collapsed (for matching names in replies)."""
    return " ".join(text.lower().replace("_", " ").split())
