"""POST /documents (multipart upload, then ingest), GET /documents, GET/DELETE /documents/{id}. Thin layer:
the body is streamed into ``UploadSink`` (to disk as it arrives); the rest is ``app.documents``."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import quote

from fastapi import APIRouter, Depends, Path, Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse
from starlette.requests import ClientDisconnect

from app.api.deps import get_services
from app.api.documents_models import DeleteResult, DocumentDetail, DocumentList, UploadResult
from app.api.openapi import errors
from app.api.security import READ, WRITE, access
from app.api.security.policy import upload_body_limit
from app.documents.catalog import ID_PATTERN, document_detail, list_documents
from app.documents.delete import delete_document
from app.documents.upload_ingest import ingest_upload
from app.documents.uploads import SavedUpload, UploadRejected, UploadSink, uploads_root
from app.services.container import Services
from ingest.load import SUPPORTED_SUFFIXES
from ingest.sources import source_id

router = APIRouter(tags=["documents"])
FLUSH_BYTES = 1 << 20  # body bytes handed to the parser (and disk) at a time
DOC_ID_PATTERN = ID_PATTERN.pattern
MAX_OFFSET = 1_000_000_000
_UPLOAD_BODY = {"requestBody": {"required": True, "content": {"multipart/form-data": {
    "schema": {"type": "object", "required": ["file"], "additionalProperties": False, "properties": {
        "file": {"type": "array", "minItems": 1, "items": {"type": "string", "format": "binary"},
                 "description": "One or more files (repeat the part); names must end in an extension "
                                "ingest reads (.txt, .md, .pdf, .json, ...), else 415; an empty file is "
                                "422."}}}}}}}
_UPLOAD_ERRORS = errors(403, 409, 413, 415, 422)
for _code, _why in ((403, "a folder inside NEORAG_UPLOADS_DIR is a symbolic link"),
                    (409, "the file is being ingested"),
                    (413, "a file over NEORAG_UPLOAD_MAX_BYTES or more than NEORAG_UPLOAD_MAX_FILES files"),
                    (415, "not multipart/form-data, or a file type ingest cannot read"),
                    (422, "a malformed multipart body, no 'file' part, or an empty file")):
    _UPLOAD_ERRORS[_code]["description"] = _why


def _limits(services: Services) -> dict[str, Any]:
    s = services.settings
    return {"max_bytes": s.upload_max_bytes, "max_files": s.upload_max_files,
            "extensions": list(SUPPORTED_SUFFIXES)}


async def _drain(body: AsyncIterator[bytes], budget: int) -> None:
    """Read and drop the rest of a refused body (up to ``budget`` bytes) so the client gets the answer."""
    try:
        async for chunk in body:
            budget -= len(chunk)
            if budget < 0:
                return
    except ClientDisconnect:
        return


async def _receive(request: Request, services: Services) -> list[SavedUpload]:
    """Stream the multipart body into the uploads directory; UploadRejected on bad input."""
    s = services.settings
    cap = upload_body_limit(s)  # a longer declared body was refused (413) by the AccessGuard already
    sink = UploadSink(uploads_root(s), request.headers.get("content-type"), s.upload_max_bytes,
                      s.upload_max_files)
    pending = bytearray()
    body = request.stream()
    try:
        async for chunk in body:
            pending += chunk
            if len(pending) >= FLUSH_BYTES:
                await run_in_threadpool(sink.write, bytes(pending))
                pending.clear()
        if pending:
            await run_in_threadpool(sink.write, bytes(pending))
        return await run_in_threadpool(sink.finish)
    except UploadRejected:
        await run_in_threadpool(sink.abort)
        await _drain(body, cap)
        raise
    except BaseException:
        await run_in_threadpool(sink.abort)
        raise


def _describe(item: SavedUpload) -> dict[str, Any]:
    path = str(item.path)
    return {"id": source_id(path), "filename": item.filename, "name": item.name, "source": path,
            "bytes": item.bytes, "content_hash": item.sha256, "duplicate": item.duplicate,
            "stream": f"/ingest/stream?path={quote(path)}&incremental=true"}


@router.post("/documents", status_code=201, response_model=UploadResult, responses=_UPLOAD_ERRORS,
             openapi_extra=_UPLOAD_BODY)
@access(WRITE)
async def upload_documents(
    request: Request,
    ingest: bool = Query(True, description="Ingest each file now (false: only store it; then follow its "
                         "'stream' URL, GET /ingest/stream, for SSE progress)."),
    services: Services = Depends(get_services),
) -> Any:
    """Upload one or more files (multipart/form-data, field ``file``, repeatable); each is streamed to disk
    under the uploads directory, then ingested like POST /ingest (incremental)."""
    await run_in_threadpool(services.store.require_reachable)
    try:
        saved = await _receive(request, services)
    except UploadRejected as exc:
        return JSONResponse(status_code=exc.status, content=exc.body())
    out = []
    for item in saved:
        entry = _describe(item)
        if ingest:
            entry.update(await run_in_threadpool(ingest_upload, services, item))
        out.append(entry)
    return {"documents": out, "ingested": ingest}


@router.get("/documents", response_model=DocumentList)
@access(READ)
def get_documents(offset: int = Query(0, ge=0, le=MAX_OFFSET, description="Items to skip."),
                  limit: int = Query(50, ge=1, le=200, description="Items per page (1-200)."),
                  services: Services = Depends(get_services)) -> dict[str, Any]:
    """The ingested files, newest ingest first: id, name, content hash, chunks, entities, ingested at."""
    return {**list_documents(services, offset, limit), "limits": _limits(services)}


@router.get("/documents/{doc_id}", response_model=DocumentDetail, responses=errors(404))
@access(READ)
def get_document(doc_id: str = Path(..., pattern=DOC_ID_PATTERN, description="Document id (doc- + 16 hex "
                                    "digits)."),
                 chunk_offset: int = Query(0, ge=0, le=MAX_OFFSET, description="Chunks to skip."),
                 chunk_limit: int = Query(100, ge=1, le=1000, description="Chunks per page (1-1000)."),
                 services: Services = Depends(get_services)) -> dict[str, Any]:
    """One ingested file: its chunks (file order) with locations, its documents and its top entities."""
    return document_detail(services, doc_id, chunk_offset, chunk_limit)  # get_source checks the id


@router.delete("/documents/{doc_id}", response_model=DeleteResult, responses=errors(404, 409))
@access(WRITE)
def remove_document(doc_id: str = Path(..., pattern=DOC_ID_PATTERN, description="Document id (doc- + 16 "
                                       "hex digits)."),
                    services: Services = Depends(get_services)) -> dict[str, Any]:
    """Delete an ingested file and everything only it supported (and the uploaded file)."""
    return delete_document(services, doc_id)  # get_source checks the id
