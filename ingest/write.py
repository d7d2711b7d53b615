"""Stage 6, write: every graph write of the pipeline, batched through named UNWIND statements."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from app.store.base import GraphStore
from ingest.chunk import LOCATION_KEYS, ChunkRec
from ingest.cooccur import cooccur_rows
from ingest.entities import Mention
from ingest.llm_entity_relations import EntityRelation
from ingest.llm_relations import TypedRelation
from ingest.load import SourceDoc

Row = dict[str, Any]


def location_props(chunk: ChunkRec) -> Row:
    """The chunk's location and heading path as flat Chunk properties (absent ones None)."""
    loc = chunk.location or {}
    return {"section": chunk.section, **{k: loc.get(k) for k in LOCATION_KEYS}}


class GraphWriter:
    """Thin, typed wrappers over the ingest statements (cypher/ingest_*.cypher and shared ones)."""

    def __init__(self, store: GraphStore, batch_size: int | None = None) -> None:
        self.store = store
        self.batch_size = batch_size or store.batch_size

    def _rows(self, name: str, rows: Iterable[Row], **extra: Any) -> int:
        return self.store.run_batched(name, rows, self.batch_size, extra or None)

    # -- documents and chunks ------------------------------------------------
    def documents(self, docs: Sequence[SourceDoc]) -> None:
        self._rows("document_upsert", ({"id": d.doc_id, "title": d.title, "source": d.source, "props": {}}
                                       for d in docs))

    def chunks(self, chunks: Sequence[ChunkRec], positions: dict[str, int]) -> None:
        self._rows("chunk_upsert", ({"id": c.id, "doc_id": c.doc_id, "text": c.text, "hash": c.hash,
                                     "source": c.source, "seq": c.seq, "title": c.title,
                                     "pos": positions[c.id], **location_props(c)} for c in chunks))

    def locations(self, chunks: Sequence[ChunkRec], positions: dict[str, int]) -> None:
        """Rewrite where stored, unchanged chunks came from (lines, pages, records, heading path, pos)."""
        self._rows("chunk_set_locations", ({"id": c.id, "pos": positions[c.id], **location_props(c)}
                                           for c in chunks))

    def next_links(self, pairs: Sequence[tuple[str, str]]) -> None:
        self._rows("ingest_next_link", ({"a": a, "b": b} for a, b in pairs))

    def embeddings(self, ids: Sequence[str], vectors: Sequence[list[float]]) -> None:
        rows = ({"id": i, "embedding": v} for i, v in zip(ids, vectors, strict=True))
        self._rows("chunk_set_embeddings", rows)

    # -- entities --------------------------------------------------------------
    def entities(self, per_chunk: dict[str, list[Mention]]) -> set[str]:
        """Upsert entities and MENTIONS of a batch; returns the entity keys touched."""
        merged: dict[str, dict[str, int]] = {}
        mention_rows = []
        for cid, mentions in per_chunk.items():
            for m in mentions:
                forms = merged.setdefault(m.key, {})
                for surface, n in m.surfaces.items():
                    forms[surface] = forms.get(surface, 0) + n
                written = sorted(m.surfaces)
                mention_rows.append({"chunk": cid, "entity": m.key, "count": m.count, "surfaces": written,
                                     "surface_counts": [m.surfaces[f] for f in written]})
        entity_rows = [{"id": key, "name": max(forms.items(), key=lambda kv: kv[1])[0],
                        "aliases": sorted(forms)} for key, forms in merged.items()]
        self._rows("ingest_entity_upsert", entity_rows)
        self._rows("ingest_mentions_set", mention_rows)
        return set(merged)

    def chunk_entities(self, chunk_ids: Sequence[str]) -> dict[str, list[str]]:
        """Entity keys mentioned by each chunk (chunks without mentions are absent)."""
        out: dict[str, list[str]] = {}
        for i in range(0, len(chunk_ids), self.batch_size):
            part = list(chunk_ids[i:i + self.batch_size])
            for row in self.store.run("ingest_chunk_entities", {"ids": part}):
                out[row["chunk"]] = list(row["entities"] or [])
        return out

    def clear_mentions(self, chunk_ids: Sequence[str]) -> None:
        self.release_entity_rels(chunk_ids)  # found through MENTIONS: before they go
        self._rows("ingest_mentions_clear", ({"id": c} for c in chunk_ids))

    def entity_types(self, types: dict[str, str]) -> None:
        """Set ``Entity.type`` (entity key -> a configured type) for LLM-typed entities."""
        self._rows("ingest_entity_types", ({"id": k, "type": t} for k, t in sorted(types.items())))

    def entity_rels(self, relations: Sequence[EntityRelation]) -> int:
        """Entity REL edges with the chunks that support them (one row per edge); returns edges written."""
        grouped: dict[tuple[str, str, str], list[str]] = {}
        for r in relations:
            chunks = grouped.setdefault((r.source, r.target, r.type), [])
            if r.chunk not in chunks:
                chunks.append(r.chunk)
        rows = [{"a": a, "b": b, "type": t, "chunks": c} for (a, b, t), c in grouped.items()]
        self._rows("ingest_entity_rel_set", rows)
        return len(rows)

    def release_entity_rels(self, chunk_ids: Sequence[str]) -> None:
        """Remove chunks from entity REL provenance (deleting edges left without support)."""
        self._rows("ingest_entity_rel_release", ({"id": c} for c in chunk_ids))
        self._rows("ingest_entity_rel_prune", ({"id": c} for c in chunk_ids))

    # -- scans and deletion ----------------------------------------------------
    def source_chunks(self, source: str) -> list[Row]:
        return self.store.run("ingest_source_chunks", {"source": source})

    def source_chunks_ordered(self, source: str) -> list[Row]:
        return self.store.run("ingest_source_chunks_ordered", {"source": source})

    def sources_under(self, prefix: str) -> list[str]:
        return [r["source"] for r in self.store.run("ingest_sources_under", {"prefix": prefix})]

    def delete_chunks(self, chunk_ids: Sequence[str], doc_ids: Iterable[str]) -> None:
        self.release_entity_rels(chunk_ids)
        self._rows("ingest_chunk_delete", ({"id": c} for c in chunk_ids))
        self._rows("ingest_document_prune", ({"id": d} for d in set(doc_ids)))

    def entity_count(self) -> int:
        rows = self.store.run("ingest_entity_count")
        return int(rows[0]["n"]) if rows else 0

    # -- derived data ------------------------------------------------------------
    def refresh_entities(self, keys: Iterable[str]) -> None:
        """Recompute freq of the given entities, delete the orphans among them, and recompute the
        others' name and aliases from the surface forms of their mentions."""
        rows = [{"id": k} for k in keys]
        self._rows("ingest_entity_freq", rows)
        self._rows("ingest_entity_prune", rows)
        self._rows("ingest_entity_names", rows)

    def rebuild_cooccurs(self, top_k: int, min_count: int) -> int:
        """Recompute the bounded CO_OCCURS edges of the whole graph (``ingest/cooccur.py``); returns edges.

        Linear in chunks (one read of every chunk's MENTIONS, counting in process), so an incremental
        ingest gives exactly the graph a clean ingest gives.
        """
        # (cooccur_rows de-duplicates each chunk's entities)
        per_chunk = [r["entities"] or [] for r in self.store.run("ingest_mentions_all")]
        rows = cooccur_rows(per_chunk, top_k, min_count)
        self.store.run("ingest_cooccur_reset")
        self._rows("ingest_cooccur_set", rows)
        return len(rows)

    def clear_relates(self, chunk_ids: Sequence[str]) -> None:
        self._rows("ingest_relates_clear", ({"id": c} for c in chunk_ids))

    def relates(self, rows: Sequence[Row]) -> None:
        self._rows("ingest_relates_set", rows)

    def clear_rel(self, chunk_ids: Sequence[str]) -> None:
        self._rows("ingest_rel_clear", ({"id": c} for c in chunk_ids))

    def rels(self, relations: Sequence[TypedRelation]) -> None:
        self._rows("ingest_rel_set", ({"a": r.src, "b": r.dst, "type": r.type, "confidence": r.confidence}
                                      for r in relations))

    def existing_rels(self, pairs: Sequence[tuple[str, str]]) -> set[tuple[str, str, str]]:
        out: set[tuple[str, str, str]] = set()
        for i in range(0, len(pairs), self.batch_size):
            rows = self.store.run("ingest_rel_existing",
                                  {"rows": [{"a": a, "b": b} for a, b in pairs[i:i + self.batch_size]]})
            out.update((r["a"], r["b"], r["type"]) for r in rows)
        return out
