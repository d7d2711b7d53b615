"""Question entity linking: question n-grams normalised like ingest's entity keys, matched on Entity.norm."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from typing import Any

from app.retrieval.text import STOPWORDS, ngrams
from app.store.base import GraphStore

_PUNCT = re.compile(r"[\W_]+", re.UNICODE)


def _fallback_key(name: str) -> str:
    """NFKC, case-folded, punctuation/whitespace collapsed, simple plural stripped (docs/SCHEMA.md)."""
    text = unicodedata.normalize("NFKC", name).casefold()
    text = _PUNCT.sub(" ", text).strip()
    words = text.split()
    if words and len(words[-1]) > 3 and words[-1].endswith("s") and not words[-1].endswith("ss"):
        words[-1] = words[-1][:-1]
    return " ".join(words)


def normaliser() -> Callable[[str], str]:
    """Ingest's entity normaliser when available (same keys as the graph), else the documented rule."""
    try:
        from ingest.normalise import normalise
    except ImportError:  # ingest not installed alongside: the documented rule
        return _fallback_key
    return normalise


def question_keys(question: str, max_n: int = 4) -> list[str]:
    """Distinct normalised keys of the question's n-grams (stopword-only grams dropped)."""
    norm = normaliser()
    keys: dict[str, None] = {}
    for gram in ngrams(question, max_n):
        key = norm(gram)
        if key and key not in STOPWORDS and len(key) >= 2:
            keys.setdefault(key, None)
    return list(keys)


def link_entities(store: GraphStore, question: str, max_freq: int) -> list[dict[str, Any]]:
    """Entities named in the question: [{id, name, freq, key}], longest keys first, hubs dropped."""
    keys = question_keys(question)
    if not keys:
        return []
    rows = store.run("retrieval_entity_link", {"keys": keys})
    seen: dict[str, dict[str, Any]] = {}
    for row in sorted(rows, key=lambda r: -len(str(r.get("key") or ""))):
        if row["id"] not in seen and int(row.get("freq") or 1) <= max_freq:
            seen[row["id"]] = row
    # a shorter key inside a longer linked key is usually part of that name ("new york" vs "york")
    linked = list(seen.values())
    out = [
        e
        for e in linked
        if not any(e["key"] != o["key"] and f" {e['key']} " in f" {o['key']} " for o in linked)
    ]
    return out
