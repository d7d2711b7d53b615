"""Stage 1, load: files or directories into ``SourceDoc`` records.

Supported: ``.txt``, ``.md`` (one document per file), ``.pdf`` (pypdf, one document),
``.json`` / ``.jsonl`` corpora: ``[{"title", "text"}]`` (also ``paragraph_text``/``contents``),
``{"title": [sentences] | "text"}``, HotpotQA / 2Wiki question files (``context``) and MuSiQue
question files (``paragraphs``); their paragraphs become documents, de-duplicated by title + text.
Undecodable bytes are replaced (and counted); unreadable files raise ``LoadError``.
Each document carries a ``Locator`` (where its text sits in the file: first line, page offsets or
record index) so its chunks can cite line ranges, pages or records.
"""

from __future__ import annotations

import hashlib
import io
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SUPPORTED_SUFFIXES = (".txt", ".md", ".pdf", ".json", ".jsonl")
_REPLACEMENT = "\ufffd"


class LoadError(Exception):
    """A file could not be read or has no supported shape (reported and skipped)."""


@dataclass(frozen=True)
class Locator:
    """Where a document's text sits in its file (one of the three kinds)."""

    line_base: int | None = None        # text/Markdown: 1-based line number of the text's first character
    page_starts: tuple[int, ...] = ()   # PDF: offset of each page's text in the document text (page 1 first)
    record: int | None = None           # JSON/JSONL: 0-based index of the record (list item, line, key)
    paragraph: int | None = None        # HotpotQA/MuSiQue question files: the paragraph within the record


@dataclass(frozen=True)
class SourceDoc:
    """One document: a whole text file, or one paragraph of a corpus."""

    doc_id: str
    title: str
    text: str
    source: str  # absolute path of the file it came from (Chunk.source)
    locator: Locator | None = None
    markdown: bool = False  # chunked section by section (ingest.markdown)


@dataclass(frozen=True)
class Fingerprint:
    """Content hash (sha256, hex) and size of a file."""

    sha256: str
    bytes: int


def fingerprint_of(raw: bytes) -> Fingerprint:
    """The fingerprint of a file's bytes."""
    return Fingerprint(hashlib.sha256(raw).hexdigest(), len(raw))


@dataclass
class LoadedFile:
    """Documents of one file plus what loading it cost (and its fingerprint when asked for)."""

    path: Path
    docs: list[SourceDoc]
    replaced_chars: int = 0
    fingerprint: Fingerprint | None = None


def file_doc_id(source: str) -> str:
    """Document id of a whole-file document (stable per path)."""
    return "doc-" + hashlib.sha1(source.encode("utf-8")).hexdigest()[:16]


def record_doc_id(title: str, text: str) -> str:
    """Document id of a corpus paragraph (content-addressed: title + text)."""
    return "doc-" + hashlib.sha1(f"{title}\x1f{text}".encode()).hexdigest()[:16]


# files that mark a graph store's directory (the embedded FalkorDB's, a `neorag neo4j` one): never ingested
STORE_MARKERS = frozenset({"neorag-falkordb.json", "neorag-falkordb.port", "appendonlydir",
                           "neorag-neo4j.json"})


def scan(path: Path) -> list[Path]:
    """Supported files under ``path`` (itself when a file), sorted; hidden files and store directories
    (e.g. an old ``./data/falkordb``) skipped."""
    if path.is_file():
        return [path]
    found = sorted(path.rglob("*"))
    stores = {p.parent for p in found if p.name in STORE_MARKERS}
    out = []
    for p in found:
        if p.is_file() and p.suffix.lower() in SUPPORTED_SUFFIXES and not any(
                part.startswith(".") for part in p.relative_to(path).parts) and not stores.intersection(
                p.parents):
            out.append(p)
    return out


def decode(raw: bytes) -> tuple[str, int]:
    """UTF-8 text (BOM stripped) with undecodable bytes replaced; returns (text, replaced count)."""
    text = raw.decode("utf-8-sig", errors="replace")
    replaced = text.count(_REPLACEMENT) - raw.count(_REPLACEMENT.encode("utf-8"))
    return text, max(0, replaced)


def _read_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise LoadError(f"cannot read {path}: {exc.strerror or exc}") from exc


def _markdown_title(text: str, fallback: str) -> str:
    for line in text.splitlines()[:20]:
        if line.startswith("# "):
            return line[2:].strip() or fallback
    return fallback


def _sentences_text(value: Any) -> str:
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, list) and all(isinstance(s, str) for s in value):
        return "".join(value).strip()
    raise LoadError("paragraph text is neither a string nor a list of sentences")


def _indexed_records(data: Any) -> Iterator[tuple[Locator, str, str]]:
    """(locator, title, text) of a parsed JSON value: the record index, and the paragraph inside a
    question record."""
    if isinstance(data, dict):
        if "context" in data or "paragraphs" in data or "title" in data:
            yield from _indexed_records([data])
            return
        for i, (title, value) in enumerate(data.items()):  # {"title": [sentences]} or {"title": "text"}
            yield Locator(record=i), str(title), _sentences_text(value)
        return
    if not isinstance(data, list):
        raise LoadError("JSON is neither a list nor an object")
    for i, item in enumerate(data):
        if not isinstance(item, dict):
            raise LoadError("JSON list items must be objects")
        if "context" in item and isinstance(item["context"], list):  # HotpotQA / 2Wiki question
            for j, pair in enumerate(item["context"]):
                if isinstance(pair, list | tuple) and len(pair) == 2:
                    yield Locator(record=i, paragraph=j), str(pair[0]), _sentences_text(pair[1])
                elif isinstance(pair, dict):
                    body = pair.get("sentences", pair.get("text", ""))
                    yield Locator(record=i, paragraph=j), str(pair.get("title", "")), _sentences_text(body)
        elif "paragraphs" in item and isinstance(item["paragraphs"], list):  # MuSiQue question
            for j, para in enumerate(item["paragraphs"]):
                body = para.get("paragraph_text", para.get("text", ""))
                yield Locator(record=i, paragraph=j), str(para.get("title", "")), _sentences_text(body)
        else:
            text_key = next((k for k in ("text", "paragraph_text", "contents", "content") if k in item), None)
            if text_key is None:
                raise LoadError("JSON objects need a text field (text, paragraph_text, contents or content)")
            yield Locator(record=i), str(item.get("title", "")), _sentences_text(item[text_key])


def _json_values(text: str, jsonl: bool) -> Any:
    try:
        if not jsonl:
            return json.loads(text)
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    except json.JSONDecodeError as exc:
        raise LoadError(f"invalid JSON: {exc.msg} at line {exc.lineno}") from exc


def too_long(path: Path, chars: int, max_chars: int) -> LoadError:
    """The per-file error for a text past ``NEORAG_INGEST_MAX_FILE_CHARS``."""
    return LoadError(f"{path.name}: its text is longer than {max_chars:,} characters "
                     f"({chars:,} so far; NEORAG_INGEST_MAX_FILE_CHARS): split it, or raise the limit")


def _pdf_text(path: Path, max_chars: int = 0) -> tuple[str, tuple[int, ...], bytes]:
    """The PDF's text (pages joined by a blank line), the offset of each page's text in it, and the file's
    bytes (read once: pypdf reads the whole file into memory either way); LoadError for any failure of the
    PDF library (an unknown filter, an unsupported encryption: NotImplementedError) and as soon as the
    text passes ``max_chars`` (0 = no cap): a small PDF may expand to millions."""
    from pypdf import PdfReader

    pages: list[str] = []
    total = 0
    try:
        raw = path.read_bytes()
        reader = PdfReader(io.BytesIO(raw))
        for pdf_page in reader.pages:
            pages.append((pdf_page.extract_text() or "").strip())
            total += len(pages[-1]) + 2
            if max_chars and total > max_chars:
                raise too_long(path, total, max_chars)
    except LoadError:
        raise
    except Exception as exc:  # noqa: BLE001 - whatever the PDF library raises is this file's error
        raise LoadError(f"cannot read PDF {path.name}: {type(exc).__name__}: {exc}") from exc
    joined = "\n\n".join(pages)
    lead = len(joined) - len(joined.lstrip())
    starts, offset = [], 0
    for page in pages:
        starts.append(max(0, offset - lead))
        offset += len(page) + 2
    return joined.strip(), tuple(starts), raw


def load_file(path: Path, seen: set[str] | None = None, fingerprint: bool = False,
              max_chars: int = 0) -> LoadedFile:
    """Documents of one file; ``seen`` de-duplicates corpus paragraphs across a run (by doc id);
    ``fingerprint``: also hash the bytes read (the file is read once). ``max_chars`` (0 = none) caps the
    text of a document file (.txt, .md, .pdf): LoadError past it (JSON / JSONL record files hold many
    documents and are bounded by their size)."""
    source = str(path)
    suffix = path.suffix.lower()
    if suffix == ".pdf":
        text, page_starts, raw = _pdf_text(path, max_chars)
        docs = [SourceDoc(file_doc_id(source), path.stem, text, source, Locator(page_starts=page_starts))] \
            if text else []
        return LoadedFile(path, docs, fingerprint=fingerprint_of(raw) if fingerprint else None)
    raw = _read_bytes(path)
    fp = fingerprint_of(raw) if fingerprint else None
    text, replaced = decode(raw)
    del raw
    if suffix in (".json", ".jsonl"):
        seen = seen if seen is not None else set()
        docs = []
        for locator, title, body in _indexed_records(_json_values(text, suffix == ".jsonl")):
            if not body:
                continue
            doc_id = record_doc_id(title, body)
            if doc_id in seen:
                continue
            seen.add(doc_id)
            docs.append(SourceDoc(doc_id, title, body, source, locator))
        return LoadedFile(path, docs, replaced, fp)
    if suffix not in (".txt", ".md"):
        supported = ", ".join(SUPPORTED_SUFFIXES)
        raise LoadError(f"unsupported file type {suffix or '(none)'}; supported: {supported}")
    if max_chars and len(text) > max_chars:
        raise too_long(path, len(text), max_chars)
    title = _markdown_title(text, path.stem) if suffix == ".md" else path.stem
    body = text.strip()
    first_line = 1 + text[: len(text) - len(text.lstrip())].count("\n")
    docs = [SourceDoc(file_doc_id(source), title, body, source, Locator(line_base=first_line),
                      markdown=suffix == ".md")] if body else []
    return LoadedFile(path, docs, replaced, fp)
