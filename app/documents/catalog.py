"""What is stored, per ingested file: the list behind ``GET /documents`` and one file's details."""

from __future__ import annotations

import re
from typing import Any

from app.core.errors import BadInput
from app.core.text import one_line
from app.documents.locations import location_label, location_of
from app.documents.uploads import is_upload
from app.services.container import Services

ID_PATTERN = re.compile(r"^doc-[0-9a-f]{16}$")
PREVIEW_CHARS = 240
TOP_ENTITIES = 20
MAX_PARTS = 200


def check_id(doc_id: str) -> str:
    """The id when it is shaped like one (``doc-`` + 16 hex digits), else 422 naming ``id``."""
    if not isinstance(doc_id, str) or not ID_PATTERN.match(doc_id):
        raise BadInput(f"id: {doc_id!r} is not a document id (doc- followed by 16 hex digits)", field="id")
    return doc_id


def _item(services: Services, row: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": row["id"], "name": row.get("name"), "title": row.get("title"), "source": row.get("path"),
        "content_hash": row.get("content_hash"), "bytes": row.get("bytes"), "chunks": row.get("chunks"),
        "documents": row.get("documents"), "entities": row.get("entities"),
        "ingested_at": row.get("ingested_at"),
        "uploaded": is_upload(services.settings, row.get("path") or "/"),
    }


def list_documents(services: Services, offset: int = 0, limit: int = 50) -> dict[str, Any]:
    """A page of ingested files, newest ingest first, with the total."""
    store = services.store
    rows = store.run("document_sources_list", {"offset": offset, "limit": limit})
    total = int(store.run("document_sources_count")[0]["n"])
    return {"documents": [_item(services, r) for r in rows], "total": total, "offset": offset, "limit": limit}


def get_source(services: Services, doc_id: str) -> dict[str, Any] | None:
    """The stored Source row of ``doc_id`` (None when unknown)."""
    rows = services.store.run("document_source_get", {"id": check_id(doc_id)})
    return rows[0] if rows else None


def not_found(doc_id: str) -> BadInput:
    """The 404 for an unknown document id."""
    return BadInput(f"id: no document {doc_id!r} (GET /documents lists them)", status=404, field="id")


def document_detail(services: Services, doc_id: str, chunk_offset: int = 0,
                    chunk_limit: int = 100) -> dict[str, Any]:
    """One file: its Source fields, a page of its chunks (file order, with locations), the Documents in it
    and the entities it mentions most. 404 when unknown."""
    row = get_source(services, doc_id)
    if row is None:
        raise not_found(doc_id)
    store, path = services.store, row["path"]
    chunks = []
    page = {"source": path, "offset": chunk_offset, "limit": chunk_limit}
    for r in store.run("document_chunks_page", page):
        loc = location_of(r)
        chunks.append({"id": r["id"], "doc_id": r.get("doc_id"), "seq": r.get("seq"), "pos": r.get("pos"),
                       "title": r.get("title"), "section": r.get("section"), "location": loc,
                       "location_label": location_label(loc), "entities": int(r.get("entities") or 0),
                       "preview": one_line(r.get("text"), PREVIEW_CHARS)})
    top = [{"id": r["id"], "name": r.get("name"), "freq": r.get("freq"), "chunks": int(r["chunks"]),
            "mentions": int(r.get("mentions") or 0)}
           for r in store.run("document_top_entities", {"source": path, "limit": TOP_ENTITIES})]
    parts = [{"id": r["id"], "title": r.get("title"), "chunks": int(r["chunks"])}
             for r in store.run("document_parts", {"source": path, "limit": MAX_PARTS})]
    return {**_item(services, row), "chunk_offset": chunk_offset, "chunk_limit": chunk_limit,
            "chunk_items": chunks, "parts": parts, "top_entities": top}
