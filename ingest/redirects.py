"""Entity merges survive re-ingest: mentions of a key merged into another entity (``EntityRedirect``,
written by POST /entities/merge) are written to the surviving entity instead of re-creating the old one."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import replace

from app.store.base import GraphStore
from ingest.entities import Mention
from ingest.llm_entity_relations import EntityRelation


def redirect_targets(store: GraphStore, keys: Iterable[str]) -> dict[str, str]:
    """Merged-away key -> surviving entity key, for those of ``keys`` that were merged (one lookup)."""
    ids = sorted(set(keys))
    if not ids:
        return {}
    return {str(r["id"]): str(r["target"]) for r in store.run("entity_redirect_get", {"ids": ids})}


def redirect_relations(moved: dict[str, str], relations: list[EntityRelation]) -> list[EntityRelation]:
    """Entity relations with merged-away endpoints replaced by the survivor (a relation that becomes a
    self-relation is dropped)."""
    out = []
    for r in relations:
        a, b = moved.get(r.source, r.source), moved.get(r.target, r.target)
        if a != b:
            out.append(replace(r, source=a, target=b))
    return out


def apply_redirects(store: GraphStore, per_chunk: dict[str, list[Mention]],
                    moved: dict[str, str] | None = None) -> dict[str, list[Mention]]:
    """``per_chunk`` with merged-away keys replaced by their surviving entity's key (one lookup per batch
    unless ``moved`` is given; two mentions that land on one key in a chunk become one, surface forms
    added)."""
    if moved is None:
        moved = redirect_targets(store, (m.key for mentions in per_chunk.values() for m in mentions))
    if not moved:
        return per_chunk
    out: dict[str, list[Mention]] = {}
    for cid, mentions in per_chunk.items():
        merged: dict[str, Mention] = {}
        for m in mentions:
            key = moved.get(m.key, m.key)
            into = merged.setdefault(key, Mention(key, Counter()))
            into.surfaces.update(m.surfaces)
        out[cid] = list(merged.values())
    return out
