"""Delete one ingested file and everything only it supported, leaving the graph as if it had never been
ingested.

Order: the file's chunks are removed with all their edges (MENTIONS, NEXT, HAS_CHUNK, RELATES_TO, REL:
RELATES_TO and chunk REL only ever join chunks of one file; entity REL edges drop the chunks from their
provenance, see ``GraphWriter.delete_chunks``), then its Documents; then, for every entity its
chunks mentioned, ``freq`` is recomputed, entities no chunk mentions any more are deleted, name and
aliases are recomputed from the remaining mentions, and CO_OCCURS counts are rebuilt (an edge whose
count falls to zero disappears); finally the Source, the uploaded file (if it was an upload), and the
caches (BM25 index, answers) are refreshed. Queries running meanwhile see either the old or the new
chunk set; chunks that vanish between two of their reads are dropped, never an error.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from app.documents.catalog import get_source, not_found
from app.documents.uploads import remove_upload
from app.services.container import Services
from ingest.jobs import ingest_jobs
from ingest.pipeline import notify_listeners
from ingest.write import GraphWriter


def delete_document(services: Services, doc_id: str) -> dict[str, Any]:
    """Delete the ingested file ``doc_id``; returns what was removed (404 unknown, 409 while ingested)."""
    row = get_source(services, doc_id)
    if row is None:
        raise not_found(doc_id)
    path = Path(str(row["path"]))
    with ingest_jobs(services).holding(path, "delete", services):
        return _delete(services, doc_id, row, path)


def _delete(services: Services, doc_id: str, row: dict[str, Any], path: Path) -> dict[str, Any]:
    s = services.settings
    writer = GraphWriter(services.store, s.write_batch_size)
    chunk_rows = writer.source_chunks(str(path))
    ids = [str(r["id"]) for r in chunk_rows]
    doc_ids = {str(r.get("doc_id") or "") for r in chunk_rows} - {""}
    touched: set[str] = set()
    for keys in writer.chunk_entities(ids).values():
        touched.update(keys)
    before = writer.entity_count()
    writer.delete_chunks(ids, doc_ids)
    writer.refresh_entities(sorted(touched))
    writer.rebuild_cooccurs(s.ingest_cooccur_top_k, s.ingest_cooccur_min_count)  # bounded: whole graph
    services.store.run("document_source_delete", {"id": doc_id})
    removed_file = remove_upload(s, path)
    notify_listeners(services)
    gone = max(0, before - writer.entity_count())
    return {"id": doc_id, "name": row.get("name"), "source": str(path), "deleted": True,
            "chunks_deleted": len(ids), "documents_deleted": len(doc_ids), "entities_removed": gone,
            "entities_updated": max(0, len(touched) - gone), "file_removed": removed_file}
