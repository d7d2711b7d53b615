"""Entity normalisation: the key that decides identity (``Entity.id`` = ``Entity.norm``).

Rules, in order: Unicode NFKC; case-fold; punctuation (anything not a letter, digit or
CJK character; ``&`` becomes ``and``) becomes a space; whitespace collapsed; a leading
article (``the``, ``a``, ``an``) dropped; simple plural on the last word of 4+ letters
(``-ies`` -> ``-y``; ``-s`` dropped unless it ends in ``ss``, ``us``, ``is`` or ``ics``).
"""

from __future__ import annotations

import re
import unicodedata

_NON_WORD = re.compile(r"[^\w]+", re.UNICODE)
_ARTICLES = ("the ", "a ", "an ")
_DOTTED = re.compile(r"(?:\b[A-Z]\.){2,}$")


def plural_to_singular(word: str) -> str:
    """Simple English singular of one lowercase word."""
    if len(word) < 4 or not word.isalpha() or not word.isascii():
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("s") and not word.endswith(("ss", "us", "is", "ics")):
        return word[:-1]
    return word


def normalise(surface: str) -> str:
    """The identity key of an entity surface form ('' when nothing is left)."""
    text = unicodedata.normalize("NFKC", surface).casefold().replace("&", " and ")
    text = _NON_WORD.sub(" ", text).replace("_", " ")
    text = " ".join(text.split())
    for art in _ARTICLES:
        if text.startswith(art) and len(text) > len(art):
            text = text[len(art):]
            break
    if not text:
        return ""
    words = text.split(" ")
    words[-1] = plural_to_singular(words[-1])
    return " ".join(words)


def clean_surface(surface: str) -> str:
    """A surface form as displayed: NFKC, whitespace collapsed, outer punctuation trimmed."""
    text = " ".join(unicodedata.normalize("NFKC", surface).split())
    text = text.strip(" \t,;:!?\"'()[]{}“”‘’«»")
    if text.endswith(".") and not _DOTTED.search(text):
        text = text.rstrip(".")
    return text
