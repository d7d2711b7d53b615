"""Subgraphs of the document graph: an entity's neighbourhood, a document, one chunk's neighbourhood.

Every read is bounded in the statement (``[..$limit]`` after ordering by strength), so a hub entity
with 100k neighbours sends ``limit`` nodes and ``truncated: true``, never the 100k.
"""

from __future__ import annotations

from typing import Any

from app.graphview.model import CHUNK, DOCUMENT, ENTITY, GraphBuilder, node_id, preview
from app.store.base import GraphStore

LINKS_PER_NODE = 2000  # edges read per shown node when joining the shown nodes


def add_entity(g: GraphBuilder, row: dict[str, Any], **props: Any) -> str | None:
    """An Entity node from a row with id, name, freq (and maybe aliases)."""
    aliases = row.get("aliases")
    return g.add_node(
        ENTITY,
        str(row["id"]),
        row.get("name"),
        key=str(row["id"]),
        freq=row.get("freq"),
        aliases=list(aliases)[:10] if aliases else None,
        **props,
    )


def add_chunks(store: GraphStore, g: GraphBuilder, ids: list[str], **props: Any) -> list[str]:
    """Chunk nodes (title, document, position, a text preview) for the stored ones among ``ids``."""
    if not ids or g.room() == 0:
        g.truncated = g.truncated or bool(ids)
        return []
    rows = {str(r["id"]): r for r in store.run("chunk_get_by_ids", {"ids": list(dict.fromkeys(ids))})}
    added = []
    for cid in dict.fromkeys(ids):
        row = rows.get(cid)
        if row is None:
            continue
        name = row.get("title") or cid
        if row.get("seq") is not None:
            name = f"{name} #{row['seq']}"
        nid = g.add_node(
            CHUNK,
            cid,
            name,
            title=row.get("title"),
            doc_id=row.get("doc_id"),
            seq=row.get("seq"),
            source=row.get("source"),
            preview=preview(row.get("text")),
            **props,
        )
        if nid is not None:
            added.append(cid)
    return added


def link_chunks(store: GraphStore, g: GraphBuilder, chunk_ids: list[str]) -> None:
    """NEXT / RELATES_TO / REL edges among chunks already in the graph."""
    if len(chunk_ids) < 2:
        return
    shown = set(chunk_ids)
    for r in store.run("graph_chunk_links", {"ids": chunk_ids, "limit": LINKS_PER_NODE}):
        if int(r.get("total") or 0) > LINKS_PER_NODE:
            g.truncated = True
        for t in r.get("targets") or []:
            if t["id"] in shown:
                g.add_edge(
                    node_id(CHUNK, r["source"]),
                    node_id(CHUNK, t["id"]),
                    t["type"],
                    weight=t.get("weight"),
                    shared=t.get("shared"),
                    rel_type=t.get("rel_type"),
                    confidence=t.get("confidence"),
                )


def link_entities(store: GraphStore, g: GraphBuilder) -> None:
    """CO_OCCURS edges among the entities already in the graph (each entity's strongest
    ``LINKS_PER_NODE``, filtered here: a list-membership test in the store is slow next to a hub)."""
    ids = [n["key"] for n in g.nodes.values() if n["label"] == "Entity"]
    if len(ids) < 2:
        return
    shown = set(ids)
    for r in store.run("graph_entity_links", {"ids": ids, "limit": LINKS_PER_NODE}):
        if int(r.get("total") or 0) > LINKS_PER_NODE:
            g.truncated = True
        for t in r.get("targets") or []:
            if t["id"] in shown:
                g.add_edge(
                    node_id(ENTITY, r["source"]), node_id(ENTITY, t["id"]), "CO_OCCURS", count=t.get("count")
                )


def chunk_entities(store: GraphStore, g: GraphBuilder, chunk_ids: list[str], per_chunk: int) -> None:
    """The entities each chunk mentions (most mentions first), with MENTIONS edges."""
    if not chunk_ids or per_chunk <= 0:
        return
    for row in store.run("graph_chunk_entities", {"ids": chunk_ids, "limit": per_chunk}):
        if int(row.get("total") or 0) > per_chunk:
            g.truncated = True
        for e in row.get("entities") or []:
            g.add_edge(node_id(CHUNK, row["chunk"]), add_entity(g, e), "MENTIONS", count=e.get("count"))


def entity_chunks(store: GraphStore, g: GraphBuilder, entity_ids: list[str], per_entity: int) -> None:
    """Up to ``per_entity`` chunks mentioning each entity, with MENTIONS edges."""
    if not entity_ids or per_entity <= 0:
        return
    rows = store.run("graph_entity_chunks", {"ids": entity_ids, "limit": per_entity})
    wanted = [c["id"] for r in rows for c in r.get("chunks") or []]
    add_chunks(store, g, wanted)
    for r in rows:
        if int(r.get("total") or 0) > per_entity:
            g.truncated = True
        for c in r.get("chunks") or []:
            g.add_edge(
                node_id(CHUNK, c["id"]), node_id(ENTITY, r["entity"]), "MENTIONS", count=c.get("count")
            )


def entity_neighbours(
    store: GraphStore, g: GraphBuilder, entity_ids: list[str], per_entity: int
) -> list[str]:
    """Up to ``per_entity`` CO_OCCURS neighbours of each entity (most shared chunks first); returns the
    ids of the neighbours added."""
    added: list[str] = []
    if not entity_ids or per_entity <= 0:
        return added
    for r in store.run("graph_entity_neighbours", {"ids": entity_ids, "limit": per_entity}):
        if int(r.get("total") or 0) > per_entity:
            g.truncated = True
        src = node_id(ENTITY, r["src"])
        for n in r.get("neighbours") or []:
            known = node_id(ENTITY, str(n["id"])) in g.nodes
            nid = add_entity(g, n)
            if nid is None:
                continue
            if not known:
                added.append(str(n["id"]))
            a, b = sorted((src, nid))  # stored from the lower id to the higher
            g.add_edge(a, b, "CO_OCCURS", count=n.get("count"))
    return added


def entity_graph(
    store: GraphStore, entity: dict[str, Any], depth: int, limit: int, chunks_per_entity: int
) -> GraphBuilder:
    """The entity, its chunks, its strongest CO_OCCURS neighbours (and theirs at depth 2)."""
    g = GraphBuilder(limit, 4 * limit)
    add_entity(g, entity, center=True)
    chunk_quota = min(chunks_per_entity, max(0, (limit - 1) // 3))
    if chunk_quota == 0 and int(entity.get("freq") or 0) > 0:
        g.truncated = True  # no room left for the chunks that mention it
    entity_chunks(store, g, [str(entity["id"])], chunk_quota)
    first = entity_neighbours(store, g, [str(entity["id"])], max(0, g.room() if depth < 2 else g.room() // 2))
    if depth >= 2 and first and g.room() > 0:
        per = max(1, g.room() // len(first))
        entity_neighbours(store, g, first, per)
    link_entities(store, g)
    return g


def document_graph(store: GraphStore, doc: dict[str, Any], limit: int, per_chunk: int) -> GraphBuilder:
    """A Document, its chunks in order (NEXT / RELATES_TO / REL among them) and their entities."""
    g = GraphBuilder(limit, 4 * limit)
    did = g.add_node(
        DOCUMENT,
        str(doc["id"]),
        doc.get("title") or doc["id"],
        title=doc.get("title"),
        source=doc.get("source"),
        chunks=doc.get("total"),
        center=True,
    )
    chunk_ids: list[str] = list(doc.get("chunks") or [])
    if int(doc.get("total") or 0) > len(chunk_ids):
        g.truncated = True
    shown = add_chunks(store, g, chunk_ids[: max(0, (limit - 1) // 2)])
    if len(shown) < len(chunk_ids):
        g.truncated = True
    for cid in shown:
        g.add_edge(did, node_id(CHUNK, cid), "HAS_CHUNK")
    link_chunks(store, g, shown)
    if shown:
        per = max(1, min(per_chunk, g.room() // len(shown))) if g.room() else 0
        chunk_entities(store, g, shown, per)
    link_entities(store, g)
    return g


def chunk_graph(store: GraphStore, chunk_id: str, limit: int, per_chunk: int) -> GraphBuilder | None:
    """One chunk, its document, its entities and its NEXT / RELATES_TO / REL neighbours; None if absent."""
    g = GraphBuilder(limit, 4 * limit)
    if not add_chunks(store, g, [chunk_id], center=True):
        return None
    cid = node_id(CHUNK, chunk_id)
    doc_id = g.nodes[cid].get("doc_id")
    if doc_id:
        did = g.add_node(
            DOCUMENT, str(doc_id), g.nodes[cid].get("title") or doc_id, title=g.nodes[cid].get("title")
        )
        g.add_edge(did, cid, "HAS_CHUNK")
    chunk_entities(store, g, [chunk_id], max(1, min(3 * per_chunk, g.room() // 2)))
    rows = store.run("graph_chunk_neighbours", {"ids": [chunk_id], "limit": max(1, g.room())})
    for r in rows:
        if int(r.get("total") or 0) > len(r.get("neighbours") or []):
            g.truncated = True
        neighbours = r.get("neighbours") or []
        add_chunks(store, g, [str(n["id"]) for n in neighbours])
        for n in neighbours:
            other = node_id(CHUNK, str(n["id"]))
            a, b = (cid, other) if n.get("out") else (other, cid)
            g.add_edge(
                a,
                b,
                n["type"],
                weight=n.get("weight"),
                shared=n.get("shared"),
                rel_type=n.get("rel_type"),
                confidence=n.get("confidence"),
            )
    return g
