"""Stage 2, chunk: character windows cut at sentence boundaries (CJK-aware), stable ids.

A chunk holds whole sentences up to ``size`` characters; the next chunk starts with the
trailing sentences of the previous one that fit in ``overlap`` characters. A sentence longer
than ``size`` is cut at whitespace (anywhere for CJK text). Chunk ids are
``<doc_id>:<seq>:<sha1(text)[:12]>``: source (via the document id) + position + content hash.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from ingest.load import SourceDoc

# sentence ends: Latin .!? followed by whitespace, CJK 。！？； (no space needed), blank lines
_SENT_END = re.compile(r"(?<=[.!?…])[\"'”’)\]]*\s+|(?<=[。！？；])|\n\s*\n")


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


def text_hash(text: str) -> str:
    """Content hash of a chunk's text."""
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


def chunk_id(doc_id: str, seq: int, digest: str) -> str:
    """Stable chunk id: document (source) + position + content hash."""
    return f"{doc_id}:{seq}:{digest[:12]}"


def split_sentences(text: str) -> list[str]:
    """Sentences (with their trailing whitespace trimmed), never empty strings."""
    parts, start = [], 0
    for m in _SENT_END.finditer(text):
        end = m.end()
        if end > start:
            parts.append(text[start:end].strip())
            start = end
    parts.append(text[start:].strip())
    return [p for p in parts if p]


def _hard_split(sentence: str, size: int) -> list[str]:
    """Cut an over-long sentence into pieces <= size, preferring whitespace."""
    out = []
    rest = sentence
    while len(rest) > size:
        cut = rest.rfind(" ", size // 2, size)
        if cut <= 0:
            cut = size
        out.append(rest[:cut].strip())
        rest = rest[cut:].strip()
    if rest:
        out.append(rest)
    return [p for p in out if p]


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


def chunk_text(text: str, size: int = 800, overlap: int = 120) -> list[str]:
    """Split ``text`` into chunk texts of at most ~``size`` characters with sentence overlap."""
    overlap = min(overlap, size // 2)
    units: list[str] = []
    for sent in split_sentences(text):
        units.extend(_hard_split(sent, size) if len(sent) > size else [sent])
    chunks: list[str] = []
    current: list[str] = []
    length = 0
    fresh = 0  # units in `current` not carried over from the previous chunk
    for unit in units:
        add = len(unit) + (1 if current else 0)
        if current and length + add > size and fresh:
            chunks.append(_join(current))
            carry: list[str] = []
            carried = 0
            for prev in reversed(current):
                if carried + len(prev) + 1 > overlap:
                    break
                carry.insert(0, prev)
                carried += len(prev) + 1
            if carried + len(unit) + 1 > size:
                carry, carried = [], 0
            current, length, fresh = carry, carried, 0
            add = len(unit) + (1 if current else 0)
        current.append(unit)
        length += add
        fresh += 1
    if current and fresh:
        chunks.append(_join(current))
    return chunks


def chunk_document(doc: SourceDoc, size: int = 800, overlap: int = 120) -> list[ChunkRec]:
    """Chunks of one document with stable ids."""
    out = []
    for seq, text in enumerate(chunk_text(doc.text, size, overlap)):
        digest = text_hash(text)
        out.append(ChunkRec(chunk_id(doc.doc_id, seq, digest), doc.doc_id, doc.title, doc.source, seq, text,
                            digest))
    return out
