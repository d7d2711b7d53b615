"""Stage 4, entities: a deterministic extractor (no LLM) and an LLM JSON extractor.

Deterministic rules (applied to each chunk's text):

1. **Capitalised spans**: runs of capitalised words (``Journal of Mathematical Physics``); the
   lowercase connectors ``of, the, for, de, del, da, di, van, von, der, den, du, la, le, y, &``
   may join two capitalised words. A span that is a single stop-listed word (sentence starters,
   pronouns, months, weekdays: ``STOP_WORDS``) is dropped; leading stop-listed words are trimmed.
2. **Acronyms**: tokens of 2+ capitals/digits with at least two capitals (``NASA``, ``U.S.``, ``COVID-19``).
3. **Numbers with units**: ``12 km``, ``3.5 million``, ``45%``, ``$20 billion``, ``1,200 metres``.
4. **CJK terms**: runs of 2-12 Han/Kana/Hangul characters between CJK punctuation, split at common
   function characters (``的 了 和 与 及 或 在 是 为 对 从 把 被``).

A candidate is kept when its normalised key has at least ``min_len`` characters; at most
``max_per_chunk`` distinct keys per chunk (first occurrence order).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field

from ingest.normalise import clean_surface, normalise

STOP_WORDS = frozenset("""
a an the in on at of for to by with from as and or but if then so yet not no nor is are was were be been
this that these those there here it its he she they we you i me him her them his hers their our your my
however although though while when where what which who whom whose why how after before during since until
also both each every either neither many most more some such other another all any one two three first
second third last next new old according despite unlike like because thus therefore furthermore moreover
meanwhile later today yesterday tomorrow yes no mr mrs ms dr st
january february march april may june july august september october november december
monday tuesday wednesday thursday friday saturday sunday
""".split())
CONNECTORS = frozenset("of the for de del da di van von der den du la le y &".split())
UNITS = (
    "%|percent|per cent|km|kilometres|kilometers|kilometre|kilometer|m|metres|meters|metre|meter|cm|mm|mi|"
    "miles|"
    "mile|ft|feet|foot|inches|kg|kilograms|g|grams|lb|lbs|pounds|t|tonnes|tons|l|litres|liters|ml|"
    "million|billion|trillion|thousand|years|year|months|days|hours|minutes|seconds|km2|sq mi|acres|hectares|"
    "°C|°F|mph|km/h|MW|GW|kW|people|inhabitants|episodes|seasons|copies|dollars|euros|usd"
)
_WORD = r"[A-Z][\w'’\-]*"
_CAP_SPAN = re.compile(
    rf"\b{_WORD}(?:\s+(?:(?:{'|'.join(sorted(CONNECTORS - {'&'}))}|&)\s+)*{_WORD})*", re.UNICODE)
_ACRONYM = re.compile(r"\b(?:[A-Z]\.){2,}|\b[A-Z][A-Z0-9\-]*[A-Z0-9]\b")
_NUMBER_UNIT = re.compile(rf"(?:[$€£¥]\s?)?\b\d[\d,]*(?:\.\d+)?\s?(?:{UNITS})(?![\w])", re.IGNORECASE)
_CJK_RUN = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]{2,}")
_CJK_SPLIT = re.compile(r"[的了和与及或在是为对从把被]")


@dataclass
class Mention:
    """One entity key found in a chunk, with its surface forms and count."""

    key: str
    surfaces: Counter[str] = field(default_factory=Counter)

    @property
    def count(self) -> int:
        return sum(self.surfaces.values())

    @property
    def name(self) -> str:
        """Most frequent surface form (ties: first seen)."""
        return self.surfaces.most_common(1)[0][0]


def _trim_stop_words(span: str) -> str:
    words = span.split()
    while words and (words[0].lower() in STOP_WORDS or words[0].lower() in CONNECTORS):
        words.pop(0)
    while words and words[-1].lower() in CONNECTORS:
        words.pop()
    return " ".join(words)


def candidate_spans(text: str) -> list[str]:
    """Raw surface candidates in text order (before normalisation and limits)."""
    found: list[tuple[int, str]] = []
    for m in _CAP_SPAN.finditer(text):
        span = _trim_stop_words(m.group(0))
        if span and not (" " not in span and span.lower() in STOP_WORDS):
            found.append((m.start(), span))
    for m in _ACRONYM.finditer(text):
        tok = m.group(0)
        if sum(1 for c in tok if c.isupper()) >= 2:
            found.append((m.start(), tok))
    for m in _NUMBER_UNIT.finditer(text):
        found.append((m.start(), m.group(0)))
    for m in _CJK_RUN.finditer(text):
        for piece in _CJK_SPLIT.split(m.group(0)):
            if 2 <= len(piece) <= 12:
                found.append((m.start(), piece))
    found = sorted(set(found), key=lambda p: p[0])
    return [s for _, s in found]


def collect(surfaces: list[str], min_len: int = 2, max_per_chunk: int = 40) -> list[Mention]:
    """Group surface forms by normalised key (first-seen order), applying the limits."""
    by_key: dict[str, Mention] = {}
    for raw in surfaces:
        surface = clean_surface(raw)
        key = normalise(surface)
        if len(key) < min_len or not surface:
            continue
        if key not in by_key:
            if len(by_key) >= max_per_chunk:
                continue
            by_key[key] = Mention(key)
        by_key[key].surfaces[surface] += 1
    return list(by_key.values())


def extract_heuristic(text: str, min_len: int = 2, max_per_chunk: int = 40) -> list[Mention]:
    """Entities of one chunk by the deterministic rules above."""
    return collect(candidate_spans(text), min_len, max_per_chunk)


def parse_llm_entities(reply: str) -> list[str] | None:
    """Surface forms from an LLM reply, or None when the reply is not the expected JSON."""
    text = reply.strip()
    if text.startswith("```"):
        text = text.strip("`")
        text = text[text.find("\n") + 1:] if "\n" in text else text
    start = min((i for i in (text.find("{"), text.find("[")) if i >= 0), default=-1)
    if start < 0:
        return None
    try:
        data, _ = json.JSONDecoder().raw_decode(text[start:])
    except json.JSONDecodeError:
        return None
    items = data.get("entities") if isinstance(data, dict) else data
    if not isinstance(items, list):
        return None
    out = []
    for item in items:
        if isinstance(item, str):
            out.append(item)
        elif isinstance(item, dict) and isinstance(item.get("name"), str):
            out.append(item["name"])
    return out
