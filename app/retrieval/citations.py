"""Citation markers an answer may keep: ``[S#]`` only for sources the response returns.

A model (a small one especially) may cite ``[S9]`` when three sources were given. Such markers are removed
from the answer, JSON and streamed alike, and named in an ``invalid_citation`` warning (JSON), so every
marker a client sees maps to a returned source.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

_MARKER = re.compile(r"\[S(\d+)\]")
_PARTIAL = re.compile(r"\[(?:S\d*)?$")  # a marker that may continue in the next delta


def keep_valid(text: str, valid: set[int]) -> tuple[str, list[str]]:
    """(text without markers citing no valid source, the removed markers)."""
    removed: list[str] = []

    def repl(m: re.Match[str]) -> str:
        if int(m.group(1)) in valid:
            return m.group(0)
        removed.append(m.group(0))
        return ""

    return _MARKER.sub(repl, text), removed


def filter_stream(deltas: Iterator[str], valid: set[int], removed: list[str]) -> Iterator[str]:
    """The deltas with invalid markers removed (a marker split across deltas is held back until whole)."""
    held = ""
    for delta in deltas:
        text, gone = keep_valid(held + delta, valid)
        removed.extend(gone)
        partial = _PARTIAL.search(text)
        held = text[partial.start():] if partial else ""
        out = text[: partial.start()] if partial else text
        if out:
            yield out
    if held:
        text, gone = keep_valid(held, valid)
        removed.extend(gone)
        if text:
            yield text


def invalid_warning(removed: list[str]) -> dict[str, str]:
    """The warning naming removed markers."""
    names = ", ".join(dict.fromkeys(removed))
    return {"type": "invalid_citation", "detail": f"removed markers that cite no returned source: {names}"}
