"""Citation markers of an LLM answer: only for returned sources, and on every sentence a source supports.

- A model (a small one especially) may cite ``[S9]`` when three sources were given. Such markers are
  removed, JSON and streamed alike, and named in an ``invalid_citation`` warning (JSON), so every marker a
  client sees maps to a returned source.
- A sentence the model left uncited gets the marker of the source sharing most of its content words (at
  least ``MIN_SHARED`` of them, or all when it has fewer), placed before its final punctuation
  (``NEORAG_QUERY_CITE_UNCITED``; a ``citations_added`` warning says so). A sentence no source supports
  stays uncited. In a stream only a sentence's final punctuation is held back until the next delta.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from app.retrieval.text import query_terms, tokenize

_MARKER = re.compile(r"\[S(\d+)\]")
_PARTIAL = re.compile(r"\[(?:S\d*)?$")  # a marker that may continue in the next delta
_END = re.compile(r"[.!?](?=\s)")  # a sentence end, confirmed by the whitespace after it
MIN_SHARED = 2


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


class Attributor:
    """Finds the source supporting a sentence (content-word overlap with the ranked sources' texts)."""

    def __init__(self, sources: list[dict[str, Any]]) -> None:
        self.sources = [(int(src["rank"]), set(tokenize(str(src.get("text") or ""))))
                        for src in sources if src.get("rank")]
        self.added: list[str] = []

    def marker(self, sentence: str) -> str:
        """`` [S#]`` for an uncited sentence a source supports, else ``""``."""
        if _MARKER.search(sentence):
            return ""
        terms = set(query_terms(sentence, 64))
        need = min(MIN_SHARED, len(terms))
        best, rank = 0, None
        for r, words in self.sources:
            shared = len(terms & words)
            if need and shared >= need and shared > best:
                best, rank = shared, r
        if rank is None:
            return ""
        self.added.append(f"[S{rank}]")
        return f" [S{rank}]"

    def sentence(self, text: str) -> str:
        """One sentence with its marker placed before the final punctuation."""
        mark = self.marker(text)
        if not mark:
            return text
        body = text.rstrip()
        tail = text[len(body):]
        if body and body[-1] in ".!?":
            return body[:-1] + mark + body[-1] + tail
        return body + mark + tail

    def text(self, answer: str) -> str:
        """The whole answer, sentence by sentence."""
        out, start = [], 0
        for m in _END.finditer(answer):
            out.append(self.sentence(answer[start:m.end()]))
            start = m.end()
        out.append(self.sentence(answer[start:]))
        return "".join(out)

    def stream(self, deltas: Iterator[str]) -> Iterator[str]:
        """The deltas with markers added; only a possible sentence end is held back until confirmed."""
        sentence = buf = ""
        for delta in deltas:
            buf += delta
            while (m := _END.search(buf)) is not None:
                whole = sentence + buf[: m.start()]
                mark = self.marker(whole + buf[m.start()])
                yield buf[: m.start()] + mark + buf[m.start()]
                sentence, buf = "", buf[m.end():]
            hold = len(buf) - 1 if buf and buf[-1] in ".!?" else len(buf)
            if hold > 0:
                yield buf[:hold]
                sentence += buf[:hold]
                buf = buf[hold:]
        if buf or sentence:
            mark = self.marker(sentence + buf)
            if buf and buf[-1] in ".!?":
                yield buf[:-1] + mark + buf[-1]
            else:
                yield buf + mark


def added_warning(added: list[str]) -> dict[str, str]:
    """The warning naming markers NeoRAG added."""
    return {"type": "citations_added", "detail": f"NeoRAG cited {len(added)} sentence(s) the model left "
            f"uncited, by word overlap with a source: {', '.join(dict.fromkeys(added))}"}
