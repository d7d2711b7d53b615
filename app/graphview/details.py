"""The page's side panel: every stored property of one node and the text of its chunks."""

from __future__ import annotations

from typing import Any

from app.core.errors import BadInput
from app.entities.lookup import resolve
from app.graphview.model import CHUNK, DOCUMENT, ENTITY, KG_ENTITY, KG_SAMPLE, split_id, split_kg_entity_key
from app.kg.graph import get_sample, get_triples
from app.store.base import GraphStore

MAX_TRIPLES = 200


def _chunks(store: GraphStore, ids: list[str]) -> list[dict[str, Any]]:
    rows = {str(r["id"]): r for r in store.run("chunk_get_by_ids", {"ids": ids})} if ids else {}
    return [
        {
            "id": cid,
            "title": rows[cid].get("title"),
            "source": rows[cid].get("source"),
            "doc_id": rows[cid].get("doc_id"),
            "seq": rows[cid].get("seq"),
            "text": rows[cid].get("text"),
        }
        for cid in ids
        if cid in rows
    ]


def node_details(store: GraphStore, nid: str, chunk_limit: int) -> dict[str, Any]:
    """``{id, label, properties, chunks: [{id, title, source, doc_id, seq, text}], triples?}``; 404 when
    the node is not stored, 422 for an id that names no node kind."""
    kind, key = split_id(nid)
    if kind == ENTITY:
        found = resolve(store, key)
        if found is not None:
            rows = store.run("graph_entity_chunks", {"ids": [found["id"]], "limit": chunk_limit})
            ids = [c["id"] for c in rows[0]["chunks"]] if rows else []
            merged = store.run("entity_redirects_to", {"ids": [found["id"]]})
            props = {
                **found,
                "aliases": list(found.get("aliases") or []),
                "merged": sorted(merged[0]["merged"]) if merged else [],
                "chunks_total": int(rows[0]["total"]) if rows else 0,
            }
            return {
                "id": f"e:{found['id']}",
                "label": "Entity",
                "properties": props,
                "chunks": _chunks(store, ids),
            }
    elif kind == CHUNK:
        chunks = _chunks(store, [key])
        if chunks:
            return {
                "id": nid,
                "label": "Chunk",
                "properties": {k: v for k, v in chunks[0].items() if k != "text"},
                "chunks": chunks,
            }
    elif kind == DOCUMENT:
        rows = store.run("graph_document", {"id": key, "limit": chunk_limit})
        if rows:
            props = {
                "id": key,
                "title": rows[0].get("title"),
                "source": rows[0].get("source"),
                "chunks_total": rows[0].get("total"),
            }
            return {
                "id": nid,
                "label": "Document",
                "properties": props,
                "chunks": _chunks(store, list(rows[0].get("chunks") or [])),
            }
    elif kind == KG_SAMPLE:
        dataset, _, sample = key.partition("/")
        info = get_sample(store, dataset, sample) if dataset and sample else None
        if info is not None:
            return {"id": nid, "label": "KGSample", "properties": info, "chunks": []}
    elif kind == KG_ENTITY:
        parts = split_kg_entity_key(key)
        triples = get_triples(store, *parts) if parts else []
        if parts and triples:
            props = {
                "dataset": parts[0],
                "sample_id": parts[1],
                "name": parts[2],
                "triples_total": len(triples),
            }
            return {
                "id": nid,
                "label": "KGEntity",
                "properties": props,
                "chunks": [],
                "triples": [list(t) for t in triples[:MAX_TRIPLES]],
            }
    else:
        raise BadInput(f"id: {nid!r} names no stored node (ids start with e:, c:, d:, s: or k:)", field="id")
    raise BadInput(f"id: {nid!r} is not in the graph (any more)", status=404, field="id")
