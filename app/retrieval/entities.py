"""Question entity linking: question n-grams normalised like ingest's entity keys, matched on Entity.norm."""

from __future__ import annotations

from typing import Any

from app.retrieval.text import STOPWORDS, ngrams
from app.store.base import GraphStore
from ingest.normalise import normalise


def question_keys(question: str, max_n: int = 4) -> list[str]:
    """Distinct normalised keys of the question's n-grams (stopword-only grams dropped)."""
    keys: dict[str, None] = {}
    for gram in ngrams(question, max_n):
        key = normalise(gram)
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
