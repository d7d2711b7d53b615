"""Stage 2, chunk: character windows cut at sentence boundaries (CJK-aware), stable ids, locations.

A chunk holds whole sentences up to ``size`` characters; the next chunk starts with the
trailing sentences of the previous one that fit in ``overlap`` characters. A sentence longer
than ``size`` is cut at whitespace (anywhere for CJK text). Chunk ids are
``<doc_id>:<seq>:<sha1(text)[:12]>``: source (via the document id) + position + content hash.

Every chunk remembers where it came from (``ChunkRec.location``): its line range for text and
Markdown, its page(s) for PDF, its record index for JSON/JSONL. Markdown documents are chunked
section by section (a chunk never spans two headings): a chunk holds its section's text without the
heading line, and carries the heading path instead (``ChunkRec.section``, e.g. ``Guide > Install >
Linux``), which is embedded and BM25-indexed with it and shown beside it.
"""

from __future__ import annotations

import hashlib
import re
from bisect import bisect_right
from dataclasses import dataclass

from ingest.load import SourceDoc
from ingest.markdown import section_path, sections

# sentence ends: Latin .!? followed by whitespace, CJK 。！？； (no space needed), blank lines
_SENT_END = re.compile(r"(?<=[.!?…])[\"'”’)\]]*\s+|(?<=[。！？；])|\n\s*\n")
Span = tuple[int, int]


# the keys a ``location`` may hold, stored as flat Chunk properties (docs/SCHEMA.md)
LOCATION_KEYS = ("page", "page_end", "line_start", "line_end", "record", "paragraph")


@dataclass(frozen=True)
class ChunkRec:
    """One chunk of a document."""

    id: str
    doc_id: str
    title: str
    source: str
    seq: int      # position within its document
    text: str
    hash: str     # sha1 of text
    location: dict[str, int] | None = None  # {"page", "page_end"?} | {"line_start", "line_end"} | {"record"}
    section: str | None = None             # Markdown heading path, e.g. "Guide > Install > Linux"

    @property
    def embed_text(self) -> str:
        """What is embedded: the heading path (when there is one), a blank line, then the text."""
        return f"{self.section}\n\n{self.text}" if self.section else self.text


def text_hash(text: str) -> str:
    """Content hash of a chunk's text."""
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


def chunk_id(doc_id: str, seq: int, digest: str) -> str:
    """Stable chunk id: document (source) + position + content hash."""
    return f"{doc_id}:{seq}:{digest[:12]}"


def _strip_span(text: str, start: int, end: int) -> Span:
    """The span of ``text[start:end].strip()``."""
    piece = text[start:end]
    stripped = piece.strip()
    lead = len(piece) - len(piece.lstrip())
    return start + lead, start + lead + len(stripped)


def sentence_spans(text: str) -> list[Span]:
    """Spans of the sentences of ``text`` (trimmed), never empty."""
    spans, start = [], 0
    for m in _SENT_END.finditer(text):
        end = m.end()
        if end > start:
            spans.append(_strip_span(text, start, end))
            start = end
    spans.append(_strip_span(text, start, len(text)))
    return [(s, e) for s, e in spans if e > s]


def split_sentences(text: str) -> list[str]:
    """Sentences (with their trailing whitespace trimmed), never empty strings."""
    return [text[s:e] for s, e in sentence_spans(text)]


def _hard_split(text: str, start: int, end: int, size: int) -> list[Span]:
    """Cut the over-long sentence ``text[start:end]`` into pieces <= size, preferring whitespace."""
    out = []
    rs, re_ = start, end
    while re_ - rs > size:
        cut = text.rfind(" ", rs + size // 2, rs + size) - rs
        if cut <= 0:
            cut = size
        out.append(_strip_span(text, rs, rs + cut))
        rs, re_ = _strip_span(text, rs + cut, re_)
    if re_ > rs:
        out.append((rs, re_))
    return [(s, e) for s, e in out if e > s]


def _joiner(a: str, b: str) -> str:
    """No space between two CJK sentences, one space otherwise."""
    if a and b and _is_cjk(a[-1]) and _is_cjk(b[0]):
        return ""
    return " "


def _is_cjk(ch: str) -> bool:
    o = ord(ch)
    return (0x3000 <= o <= 0x9FFF) or (0xAC00 <= o <= 0xD7AF) or (0xF900 <= o <= 0xFAFF) \
        or (0xFF00 <= o <= 0xFFEF)


def _join(parts: list[str]) -> str:
    out = ""
    for p in parts:
        out = p if not out else out + _joiner(out, p) + p
    return out


def chunk_spans(text: str, size: int = 800, overlap: int = 120) -> list[tuple[str, int, int]]:
    """``(chunk text, start, end)``: chunk texts of at most ~``size`` characters with sentence overlap,
    and the span of ``text`` each one was taken from."""
    overlap = min(overlap, size // 2)
    units: list[Span] = []
    for s, e in sentence_spans(text):
        units.extend(_hard_split(text, s, e, size) if e - s > size else [(s, e)])
    chunks: list[tuple[str, int, int]] = []
    current: list[Span] = []
    length = 0
    fresh = 0  # units in `current` not carried over from the previous chunk

    def emit() -> None:
        chunks.append((_join([text[s:e] for s, e in current]), current[0][0], current[-1][1]))

    for unit in units:
        ulen = unit[1] - unit[0]
        add = ulen + (1 if current else 0)
        if current and length + add > size and fresh:
            emit()
            carry: list[Span] = []
            carried = 0
            for prev in reversed(current):
                if carried + (prev[1] - prev[0]) + 1 > overlap:
                    break
                carry.insert(0, prev)
                carried += (prev[1] - prev[0]) + 1
            if carried + ulen + 1 > size:
                carry, carried = [], 0
            current, length, fresh = carry, carried, 0
            add = ulen + (1 if current else 0)
        current.append(unit)
        length += add
        fresh += 1
    if current and fresh:
        emit()
    return chunks


def chunk_text(text: str, size: int = 800, overlap: int = 120) -> list[str]:
    """Split ``text`` into chunk texts of at most ~``size`` characters with sentence overlap."""
    return [t for t, _, _ in chunk_spans(text, size, overlap)]


class _Locate:
    """Chunk spans of one document -> its ``location`` (line range, pages or record)."""

    def __init__(self, doc: SourceDoc) -> None:
        self.doc = doc
        self.newlines: list[int] | None = None
        if doc.locator is not None and doc.locator.line_base is not None:
            self.newlines = [m.start() for m in re.finditer("\n", doc.text)]

    def __call__(self, start: int, end: int) -> dict[str, int] | None:
        loc = self.doc.locator
        if loc is None:
            return None
        if self.newlines is not None and loc.line_base is not None:
            first = loc.line_base + bisect_right(self.newlines, start - 1)
            last = loc.line_base + bisect_right(self.newlines, max(start, end - 1) - 1)
            return {"line_start": first, "line_end": last}
        if loc.page_starts:
            first = bisect_right(loc.page_starts, start)
            last = bisect_right(loc.page_starts, max(start, end - 1))
            return {"page": first} if last == first else {"page": first, "page_end": last}
        if loc.record is not None:
            out = {"record": loc.record}
            if loc.paragraph is not None:
                out["paragraph"] = loc.paragraph
            return out
        return None


def _pieces(doc: SourceDoc, size: int, overlap: int,
            markdown_sections: bool) -> list[tuple[str, int, int, str | None]]:
    """(text, start, end, heading path) of the document's chunks, in order."""
    if not (markdown_sections and doc.markdown):
        return [(t, s, e, None) for t, s, e in chunk_spans(doc.text, size, overlap)]
    out: list[tuple[str, int, int, str | None]] = []
    for sec in sections(doc.text):
        body = doc.text[sec.heading_end:sec.end]  # the heading itself travels as the chunk's path
        path = section_path(sec.path)
        out.extend((t, sec.heading_end + s, sec.heading_end + e, path)
                   for t, s, e in chunk_spans(body, size, overlap))
    return out


def chunk_document(doc: SourceDoc, size: int = 800, overlap: int = 120,
                   markdown_sections: bool = True) -> list[ChunkRec]:
    """Chunks of one document with stable ids, locations and (Markdown) heading paths."""
    locate = _Locate(doc)
    out = []
    for seq, (text, start, end, path) in enumerate(_pieces(doc, size, overlap, markdown_sections)):
        digest = text_hash(text)
        out.append(ChunkRec(chunk_id(doc.doc_id, seq, digest), doc.doc_id, doc.title, doc.source, seq, text,
                            digest, locate(start, end), path))
    return out
