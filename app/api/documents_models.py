"""OpenAPI response models of the /documents endpoints (extra fields allowed: the dicts are the source)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class DocumentItem(_Open):
    """One ingested file."""

    id: str = Field(description="doc-<sha1(path)[:16]>")
    name: str | None = None
    title: str | None = None
    source: str | None = Field(None, description="Absolute path of the file.")
    content_hash: str | None = Field(None, description="sha256 of the file's bytes.")
    bytes: int | None = None
    chunks: int | None = None
    documents: int | None = None
    entities: int | None = None
    ingested_at: str | None = Field(None, description="ISO 8601 UTC of its last ingest.")
    uploaded: bool = False


class DocumentList(_Open):
    documents: list[DocumentItem]
    total: int
    offset: int
    limit: int
    limits: dict[str, Any]


class ChunkItem(_Open):
    id: str
    doc_id: str | None = None
    seq: int | None = None
    pos: int | None = None
    title: str | None = None
    section: str | None = None
    location: dict[str, int] | None = Field(
        None, description='{"page": n} (+ "page_end"), {"line_start": a, "line_end": b} or {"record": i}')
    location_label: str = ""
    entities: int = 0
    preview: str = ""


class DocumentDetail(DocumentItem):
    chunk_offset: int
    chunk_limit: int
    chunk_items: list[ChunkItem]
    parts: list[dict[str, Any]]
    top_entities: list[dict[str, Any]]


class UploadedDocument(_Open):
    id: str | None = Field(description="The document id; null when the upload was removed (`removed`).")
    filename: str
    name: str
    source: str
    bytes: int
    content_hash: str
    duplicate: bool
    stream: str = Field(description="GET /ingest/stream URL that ingests it with SSE progress.")
    ingest: dict[str, Any] | None = Field(None, description="POST /ingest counts (ingest=true).")
    ingest_error: str | None = Field(None, description="Why the file was not ingested (e.g. a PDF the "
                                     "reader cannot decode, a text past NEORAG_INGEST_MAX_FILE_CHARS).")
    removed: bool = Field(False, description="True when the ingest failed and the upload was deleted: an "
                                             "upload either becomes a listed document or is removed.")


class UploadResult(_Open):
    documents: list[UploadedDocument]
    ingested: bool


class DeleteResult(_Open):
    id: str
    name: str | None = None
    source: str
    deleted: bool
    chunks_deleted: int
    documents_deleted: int
    entities_removed: int
    entities_updated: int
    file_removed: bool
