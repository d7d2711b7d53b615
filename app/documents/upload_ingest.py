"""Ingest of one stored upload for POST /documents: an upload either becomes a listed document or is removed
(an unlisted file in the uploads folder could be neither listed nor deleted through the API)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from app.core.errors import BadInput, NeoRAGError
from app.documents.catalog import get_source
from app.documents.uploads import SavedUpload, is_upload, remove_upload, uploads_root
from app.services.container import Services
from ingest.jobs import ingest_jobs
from ingest.options import IngestOptions
from ingest.sources import source_id

log = logging.getLogger(__name__)
NO_TEXT = "no text could be read from it, so there is nothing to list (a scanned PDF, an empty document?)"


def ingest_upload(services: Services, item: SavedUpload) -> dict[str, Any]:
    """Ingest one stored upload (incremental: a repeated upload is a no-op); the fields the upload's entry
    gets: ``ingest`` (the counts), and on failure ``ingest_error`` and ``removed`` (with ``id`` None when the
    file was deleted: there is no document to address)."""
    result: dict[str, Any] | None = None
    try:
        options = IngestOptions(incremental=True, allowed_roots=[uploads_root(services.settings)])
        result = ingest_jobs(services).run_sync(services, item.path, options)
    except BadInput as exc:
        if exc.status == 409:  # being ingested right now: that ingest decides
            return {"ingest": None, "ingest_error": str(exc)}
        error = str(exc)
    except NeoRAGError as exc:
        error = str(exc)
    except Exception as exc:  # noqa: BLE001 - one JSON field, the upload cleaned up
        log.exception("ingest of the upload %s failed", item.path)
        error = f"{type(exc).__name__}: {exc}"
    else:
        failed = [e["error"] for e in result.get("errors", [])
                  if Path(e.get("file", "")).resolve() == item.path.resolve()]
        if not failed and listed(services, item):
            return {"ingest": result}
        error = str(failed[0]) if failed else NO_TEXT
    removed = not listed(services, item) and (remove_upload(services.settings, item.path)
                                              or not item.path.exists())  # the job removed it already
    out: dict[str, Any] = {"ingest": result, "ingest_error": error, "removed": removed}
    if removed:
        out["id"] = None
    return out


def listed(services: Services, item: SavedUpload) -> bool:
    """Whether the upload is a listed document (this ingest, or an earlier one of the same file)."""
    try:
        return get_source(services, source_id(str(item.path))) is not None
    except NeoRAGError:
        return item.duplicate  # the store cannot tell: keep a file stored before


def drop_unlisted_upload(services: Services, path: Path, result: dict[str, Any]) -> None:
    """After an ingest of ``path`` (POST /ingest, /ingest/stream, MCP): when it is one uploaded file that did
    not become a listed document (unreadable, no text), delete it and say so in ``result``
    (``upload_removed``): an upload either becomes a listed document or is removed."""
    settings = services.settings
    if not is_upload(settings, path) or not path.is_file():
        return
    try:
        if get_source(services, source_id(str(path))) is not None:
            return
    except NeoRAGError:
        return  # the store cannot tell: keep it
    if remove_upload(settings, path):
        result["upload_removed"] = True
