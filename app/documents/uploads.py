"""Uploaded files: a multipart/form-data body streamed part by part straight to disk (never whole in memory).

Each ``file`` part is written to ``<uploads>/.incoming/<random>.part`` while its sha256 and size are
computed, then moved to ``<uploads>/<sha256[:16]>/<safe name>``: the same content under the same name
lands on the same path (an upload is idempotent and its Document id stable), and different content never
overwrites an earlier upload. Names are reduced to their last path component and to letters, digits and
``. _ - ( ) +`` and spaces; extensions are those ingest reads. Over-size parts (413), unsupported types
(415) and malformed bodies (422) raise ``UploadRejected``; ``abort`` then removes what this request wrote.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import unicodedata
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from python_multipart.exceptions import MultipartParseError
from python_multipart.multipart import MultipartParser, parse_options_header

from app.core.config import Settings
from ingest.checkpoint import checkpoint_path
from ingest.load import SUPPORTED_SUFFIXES

FIELD = "file"
INCOMING = ".incoming"
MAX_NAME_CHARS = 120
_UNSAFE = re.compile(r"[^\w .()+\-]+", re.UNICODE)


class UploadRejected(Exception):
    """An upload refused with an HTTP status, a stable error code and a one-line message."""

    def __init__(self, status: int, error: str, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.status, self.error, self.message, self.extra = status, error, message, extra

    def body(self) -> dict[str, Any]:
        """The JSON error body."""
        return {"error": self.error, "message": self.message, "field": FIELD, **self.extra}


@dataclass
class SavedUpload:
    """One stored file."""

    filename: str       # the name the client sent
    name: str           # the safe name on disk
    path: Path
    bytes: int
    sha256: str
    duplicate: bool     # the same content under the same name was stored already


def uploads_root(settings: Settings) -> Path:
    """The uploads directory, resolved (it need not exist yet)."""
    return Path(settings.uploads_dir).expanduser().resolve()


def ingest_roots(settings: Settings) -> list[Path]:
    """Where HTTP ingest may read: ``NEORAG_INGEST_ROOTS`` plus the uploads directory."""
    return [*settings.ingest_roots, uploads_root(settings)]


def is_upload(settings: Settings, path: str | Path) -> bool:
    """Whether ``path`` is a file stored by POST /documents."""
    return Path(path).resolve().is_relative_to(uploads_root(settings))


def safe_name(filename: str) -> str:
    """A file name safe to store: last path component only, no hidden/NUL/control characters, at most
    ``MAX_NAME_CHARS`` characters with the extension kept; ``upload`` when nothing is left."""
    base = re.split(r"[\\/]", unicodedata.normalize("NFC", filename or ""))[-1]
    base = "".join(ch for ch in base if unicodedata.category(ch)[0] != "C")
    base = _UNSAFE.sub("_", base).strip(" .")
    stem, dot, suffix = base.rpartition(".")
    if not dot:
        stem, suffix = base, ""
    suffix = suffix.lower()[:16]
    stem = stem.strip(" .")[: MAX_NAME_CHARS - len(suffix) - 1].rstrip(" .") or "upload"
    return f"{stem}.{suffix}" if suffix else stem


def check_type(filename: str, name: str) -> None:
    """415 unless the file's extension is one ingest reads."""
    suffix = Path(name).suffix.lower()
    if suffix not in SUPPORTED_SUFFIXES:
        raise UploadRejected(415, "unsupported_type",
                             f"file: {filename!r} has an unsupported type ({suffix or 'no extension'}); "
                             f"supported: {', '.join(SUPPORTED_SUFFIXES)}",
                             supported=list(SUPPORTED_SUFFIXES))


@dataclass
class _Part:
    headers: dict[str, bytes] = field(default_factory=dict)  # raw: parse_options_header takes bytes as sent
    header_name: bytearray = field(default_factory=bytearray)
    header_value: bytearray = field(default_factory=bytearray)
    filename: str = ""
    name: str = ""
    temp: Path | None = None
    handle: IO[bytes] | None = None
    size: int = 0
    digest: Any = None


class UploadSink:
    """Parses one multipart/form-data body fed with ``write(chunk)``; ``finish()`` returns the saved files.

    Only ``file`` parts are accepted. ``max_bytes`` bounds each file, ``max_files`` their number.
    """

    def __init__(self, root: Path, content_type: str | None, max_bytes: int, max_files: int) -> None:
        ctype, params = parse_options_header(content_type or "")
        boundary = params.get(b"boundary")
        if ctype != b"multipart/form-data" or not boundary:
            raise UploadRejected(415, "unsupported_media_type",
                                 "body: send multipart/form-data with one or more 'file' parts "
                                 f"(got Content-Type {content_type or 'none'!r})")
        self.root, self.max_bytes, self.max_files = root, max_bytes, max_files
        self.saved: list[SavedUpload] = []
        self._part = _Part()
        self._parts = 0
        self._parser = MultipartParser(boundary, {
            "on_part_begin": self._begin, "on_header_field": self._header_field,
            "on_header_value": self._header_value, "on_header_end": self._header_end,
            "on_headers_finished": self._headers_done, "on_part_data": self._data, "on_part_end": self._end,
        })

    # -- feeding ---------------------------------------------------------------------------
    def write(self, chunk: bytes) -> None:
        """Parse the next piece of the body (file data goes to disk as it arrives)."""
        try:
            self._parser.write(chunk)
        except MultipartParseError as exc:
            raise UploadRejected(422, "invalid_request", f"body: malformed multipart body ({exc})") from None

    def finish(self) -> list[SavedUpload]:
        """End of body: the saved files (422 when the body held no file or ended inside a part)."""
        try:
            self._parser.finalize()
        except MultipartParseError as exc:
            raise UploadRejected(422, "invalid_request", f"body: malformed multipart body ({exc})") from None
        if self._part.handle is not None:
            raise UploadRejected(422, "invalid_request", "body: the multipart body ended inside a file part")
        if not self.saved:
            raise UploadRejected(422, "invalid_request", "file: no file sent (use multipart field 'file')")
        return self.saved

    def abort(self) -> None:
        """Remove the partial file and every file this request stored (duplicates of earlier uploads stay)."""
        self._close_temp()
        for item in self.saved:
            if not item.duplicate:
                item.path.unlink(missing_ok=True)
                _remove_empty_dir(item.path.parent, self.root)
        self.saved = []

    # -- parser callbacks -------------------------------------------------------------------
    def _begin(self) -> None:
        self._part = _Part()

    def _header_field(self, data: bytes, start: int, end: int) -> None:
        self._part.header_name += data[start:end]

    def _header_value(self, data: bytes, start: int, end: int) -> None:
        self._part.header_value += data[start:end]

    def _header_end(self) -> None:
        part = self._part
        name = part.header_name.decode("latin-1").lower()
        part.headers[name] = bytes(part.header_value)
        part.header_name, part.header_value = bytearray(), bytearray()

    def _headers_done(self) -> None:
        part = self._part
        # bytes, not str: a str with characters beyond latin-1 (a UTF-8 name) makes it raise
        _, params = parse_options_header(part.headers.get("content-disposition", b""))
        field_name = params.get(b"name", b"").decode("utf-8", "replace")
        if field_name != FIELD:
            raise UploadRejected(422, "invalid_request",
                                 f"file: only multipart parts named 'file' are accepted, got {field_name!r}")
        raw = params.get(b"filename")
        if raw is None:
            raise UploadRejected(422, "invalid_request", "file: a 'file' part has no filename")
        part.filename = raw.decode("utf-8", "replace")
        part.name = safe_name(part.filename)
        check_type(part.filename, part.name)
        self._parts += 1
        if self._parts > self.max_files:
            raise UploadRejected(413, "too_many_files",
                                 f"file: more than {self.max_files} files in one request "
                                 "(NEORAG_UPLOAD_MAX_FILES)", limit_files=self.max_files)
        incoming = self.root / INCOMING
        incoming.mkdir(parents=True, exist_ok=True)
        part.temp = incoming / f"{uuid.uuid4().hex}.part"
        part.handle = part.temp.open("wb")
        part.digest = hashlib.sha256()

    def _data(self, data: bytes, start: int, end: int) -> None:
        part = self._part
        if part.handle is None:
            return
        piece = data[start:end]
        part.size += len(piece)
        if part.size > self.max_bytes:
            raise UploadRejected(413, "too_large",
                                 f"file: {part.filename!r} is larger than the upload limit of "
                                 f"{self.max_bytes} bytes (NEORAG_UPLOAD_MAX_BYTES)",
                                 limit_bytes=self.max_bytes)
        part.handle.write(piece)
        part.digest.update(piece)

    def _end(self) -> None:
        part = self._part
        if part.handle is None or part.temp is None:
            return
        part.handle.close()
        part.handle = None
        if part.size == 0:
            raise UploadRejected(422, "invalid_request", f"file: {part.filename!r} is empty")
        sha = part.digest.hexdigest()
        target = self.root / sha[:16] / part.name
        if target.parent.exists() and target.parent.resolve() != target.parent:  # a linked folder
            raise UploadRejected(403, "forbidden", f"file: the uploads folder {sha[:16]} is a symbolic link; "
                                 "uploads are only written inside NEORAG_UPLOADS_DIR")
        # a symbolic link left at the target is replaced by the file, never followed or taken as the upload
        duplicate = not target.is_symlink() and target.is_file() and target.stat().st_size == part.size
        if duplicate:
            part.temp.unlink(missing_ok=True)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(part.temp, target)
        part.temp = None
        self.saved.append(SavedUpload(part.filename, part.name, target, part.size, sha, duplicate))

    def _close_temp(self) -> None:
        part = self._part
        if part.handle is not None:
            part.handle.close()
            part.handle = None
        if part.temp is not None:
            part.temp.unlink(missing_ok=True)
            part.temp = None


def _remove_empty_dir(folder: Path, root: Path) -> None:
    if folder != root and folder.is_relative_to(root):
        try:
            folder.rmdir()
        except OSError:
            pass


def remove_upload(settings: Settings, path: Path) -> bool:
    """Delete an uploaded file with its ingest checkpoint and (now empty) folder; False when not an upload
    or already gone."""
    root = uploads_root(settings)
    path = path.resolve()
    if not path.is_relative_to(root) or path.parent == root:
        return False
    from ingest.pipeline import state_dir

    existed = path.is_file()
    path.unlink(missing_ok=True)
    checkpoint_path(path, settings.checkpoint_dir(), state_dir(settings)).unlink(missing_ok=True)
    if path.parent.is_dir() and not any(path.parent.iterdir()):
        shutil.rmtree(path.parent, ignore_errors=True)
    return existed
