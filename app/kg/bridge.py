"""The function-call bridge: ``get_relations("e")`` / ``get_triples("e", ["r1", ...])`` over the whole graph.

Calls may be bare or inside ``<kg-query>`` tags, several per query. Relations are ranked against
the question with BM25 (relation ids split on dots/underscores) and cut to ``top_k``; triples are
limited per relation. Answers are wrapped in ``<information>...</information>``.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Any

from rank_bm25 import BM25Okapi

from app.kg.graph import find_entities, get_relations, get_triples
from app.store.base import GraphStore

INVALID = ('Invalid query format. Use get_relations("entity_name") or '
           'get_triples("entity_name", ["relation1", ...]).')
MAX_RELATIONS = 4
_TAG = re.compile(r"<kg-query>(.*?)</kg-query>", re.DOTALL | re.IGNORECASE)
_CALL = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*\(")
_TOKEN = re.compile(r"[a-z0-9]+")


@dataclass
class Call:
    """One parsed call (or the text that failed to parse)."""

    text: str
    name: str | None = None
    entity: str | None = None
    relations: list[str] | None = None
    error: str | None = None


def _close_paren(text: str, start: int) -> int:
    """Index of the ')' closing the '(' before ``start``, skipping quoted strings; -1 if none."""
    depth, quote, i = 1, "", start
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == "\\":
                i += 1
            elif ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return -1


def _parse_one(name: str, args_text: str, text: str) -> Call:
    try:
        args: tuple[Any, ...] = ast.literal_eval(f"({args_text},)") if args_text.strip() else ()
    except (ValueError, SyntaxError):
        return Call(text, error=INVALID)
    if name == "get_relations" and len(args) == 1 and isinstance(args[0], str) and args[0].strip():
        return Call(text, name, args[0].strip())
    if (name == "get_triples" and len(args) == 2 and isinstance(args[0], str) and args[0].strip()
            and isinstance(args[1], list | tuple) and args[1] and all(isinstance(r, str) for r in args[1])):
        relations = list(dict.fromkeys(r.strip() for r in args[1] if r.strip()))[:MAX_RELATIONS]
        if relations:
            return Call(text, name, args[0].strip(), relations)
    return Call(text, error=INVALID)


def parse_calls(query: str) -> list[Call]:
    """Every call in ``query``; text that is not a well-formed call becomes an invalid call."""
    blocks = _TAG.findall(query) or [query]
    calls: list[Call] = []
    for block in blocks:
        pos = 0
        while True:
            match = _CALL.search(block, pos)
            if match is None:
                if block[pos:].strip(" \t\r\n;,"):
                    calls.append(Call(block[pos:].strip(), error=INVALID))
                break
            if block[pos:match.start()].strip(" \t\r\n;,"):
                calls.append(Call(block[pos:match.start()].strip(), error=INVALID))
            end = _close_paren(block, match.end())
            if end < 0:
                calls.append(Call(block[match.start():].strip(), error=INVALID))
                break
            text = block[match.start():end + 1]
            calls.append(_parse_one(match.group(1), block[match.end():end], text))
            pos = end + 1
    return calls or [Call(query.strip(), error=INVALID)]


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(text.lower().replace("_", " "))


def rank_relations(relations: list[str], question: str, top_k: int) -> list[str]:
    """``relations`` ordered by BM25 score against ``question`` (ties alphabetical), cut to ``top_k``."""
    ordered = sorted(set(relations))
    query = _tokens(question)
    if not ordered or not query:
        return ordered[:top_k]
    bm25 = BM25Okapi([_tokens(r) or ["_"] for r in ordered])
    scores = bm25.get_scores(query)
    ranked = sorted(zip(ordered, scores, strict=True), key=lambda p: (-p[1], p[0]))
    return [r for r, _ in ranked[:top_k]]


def answer_query(store: GraphStore, dataset: str, query: str, question: str = "", top_k: int = 10,
                 triples_per_relation: int = 5) -> dict[str, Any]:
    """Run every call; returns ``{"text": "<information>...</information>", "calls": [...]}``."""
    parts: list[str] = []
    results: list[dict[str, Any]] = []
    for call in parse_calls(query):
        if call.error is not None or call.entity is None:
            parts.append(call.error or INVALID)
            results.append({"call": call.text, "ok": False, "error": call.error or INVALID})
            continue
        if not find_entities(store, dataset, call.entity):
            msg = f'Entity "{call.entity}" not found in KG.'
            parts.append(msg)
            results.append({"call": call.text, "ok": False, "error": msg})
            continue
        if call.name == "get_relations":
            rels = rank_relations(get_relations(store, dataset, None, call.entity), question, top_k)
            parts.append("\n".join(rels) if rels else "No relations found.")
            results.append({"call": call.text, "ok": True, "result": rels})
        else:
            triples = get_triples(store, dataset, None, call.entity, call.relations,
                                  limit_per_relation=triples_per_relation)
            lines = [f"[{h}, {r}, {t}]" for h, r, t in triples]
            parts.append("\n".join(lines) if lines else "No triples found.")
            results.append({"call": call.text, "ok": True, "result": [list(t) for t in triples]})
    return {"text": "<information>" + "\n\n".join(parts) + "</information>", "calls": results}
