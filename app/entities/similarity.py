"""Name similarity of two entity keys (pure functions, no I/O).

Keys are ingest's normalised forms (lower case, punctuation as spaces). Rules, each with its evidence
label: ``same_after_cleanup`` (equal once possessive ``s`` and leading/trailing stop words are gone:
"harald hardrada s" / "harald hardrada"), ``acronym`` ("nfl" / "national football league"),
``trailing_words`` / ``leading_words`` / ``token_subset`` (every word of one is in the other: "obama" /
"barack obama" is more likely one thing than "ottawa" / "ottawa river"), ``spelling``
(character trigram cosine; a word and its derived form, "india" / "indian", count less:
``derived_form``; names told apart by short marker words, "vitamin a" / "vitamin b", even less:
``different_marker``). Keys whose numbers differ ("apollo 11" / "apollo 13") never match.
"""

from __future__ import annotations

import math
import re
from collections import Counter

_DIGITS = re.compile(r"\d+")
# "india" / "indian", "german" / "germany": a word and its adjective or demonym are different things
DERIVED_SUFFIXES = ("n", "an", "ian", "ese", "ish", "i", "ic", "y", "al", "ern")
DERIVED_FACTOR = 0.6
# "vitamin a" / "vitamin b", "world war i" / "world war ii": names told apart by a short marker word
MARKER_CHARS = 4
STOP = frozenset({"the", "an", "of", "and", "in", "on", "at", "for", "to", "de", "la", "le"})
LEADING = frozenset({"the", "a", "an"})
TRAILING = frozenset({"the", "of", "and", "in", "on", "at", "for", "to"})


def tokens(key: str) -> list[str]:
    return key.split()


def core(key: str, possessive: bool = True) -> str:
    """The key without a possessive "s" (a lone "s" after a longer word; kept when ``possessive`` is
    false: "david s" from "David S."), a leading article or a trailing preposition."""
    words: list[str] = []
    for w in tokens(key):
        if possessive and w == "s" and words and len(words[-1]) > 1:
            continue
        words.append(w)
    while words and words[0] in LEADING:
        words.pop(0)
    while words and words[-1] in TRAILING:
        words.pop()
    return " ".join(words)


def numbers(key: str) -> tuple[str, ...]:
    return tuple(_DIGITS.findall(key))


def trigrams(key: str) -> Counter[str]:
    padded = f"  {key} "
    return Counter(padded[i : i + 3] for i in range(len(padded) - 2))


def trigram_cosine(a: str, b: str) -> float:
    ta, tb = trigrams(a), trigrams(b)
    dot = sum(n * tb[g] for g, n in ta.items() if g in tb)
    norm = math.sqrt(sum(n * n for n in ta.values()) * sum(n * n for n in tb.values()))
    return dot / norm if norm else 0.0


def initials(key: str) -> str:
    """First letters of the non-stop words ("national football league" -> "nfl")."""
    return "".join(w[0] for w in tokens(key) if w not in STOP and w[0].isalpha())


def is_acronym(short: str, long: str) -> bool:
    """``short`` (one word, or spaced letters "u s") spells the initials of the multi-word ``long``."""
    letters = short.replace(" ", "")
    if len(letters) < 2 or not letters.isalpha() or len(tokens(long)) < 2:
        return False
    if " " in short and any(len(w) > 1 for w in tokens(short)):
        return False
    return letters == initials(long)


def name_similarity(a: str, b: str, possessive: tuple[bool, bool] = (True, True)) -> tuple[float, str]:
    """(score in [0, 1], rule) for two entity keys; ``possessive`` says whether each may end in a
    possessive "s" (its surface forms have "'s")."""
    if numbers(a) != numbers(b):
        return 0.0, "numbers_differ"
    ca, cb = core(a, possessive[0]), core(b, possessive[1])
    if ca and ca == cb:
        return 1.0, "same_after_cleanup"
    short, long = sorted((ca or a, cb or b), key=len)
    if is_acronym(short, long):
        # two letters spell the initials of many names ("am": "Ann-Margret", "Arena México")
        return (0.9, "acronym") if len(short.replace(" ", "")) > 2 else (0.7, "short_acronym")
    spelling = trigram_cosine(ca or a, cb or b)
    ws, wl = [w for w in tokens(short) if w not in STOP], [w for w in tokens(long) if w not in STOP]
    if ws and len(ws) < len(wl) and set(ws) <= set(wl):
        # "obama" / "barack obama": a real hint, weaker the more the long name adds. English names put
        # the head last: "ottawa" / "ottawa river" (leading words) is usually a different thing.
        ratio = sum(len(w) for w in ws) / max(1, sum(len(w) for w in wl))
        if wl[-len(ws) :] == ws:
            return 0.55 + 0.35 * ratio, "trailing_words"
        if wl[: len(ws)] == ws:
            return 0.4 + 0.3 * ratio, "leading_words"
        return 0.5 + 0.3 * ratio, "token_subset"
    if long.startswith(short) and long[len(short) :] in DERIVED_SUFFIXES:
        return spelling * DERIVED_FACTOR, "derived_form"
    only_a, only_b = set(tokens(ca or a)) - set(tokens(cb or b)), set(tokens(cb or b)) - set(tokens(ca or a))
    if only_a and only_b and all(len(w) <= MARKER_CHARS for w in only_a | only_b):
        return spelling * DERIVED_FACTOR * 0.5, "different_marker"
    return spelling, "spelling"
