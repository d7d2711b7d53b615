"""Entity merges survive re-ingest: mentions of a key merged into another entity (``EntityRedirect``,
written by POST /entities/merge) are written to the surviving entity instead of re-creating the old one."""

from __future__ import annotations

from collections import Counter

from app.store.base import GraphStore
from ingest.entities import Mention


def apply_redirects(store: GraphStore, per_chunk: dict[str, list[Mention]]) -> dict[str, list[Mention]]:
    """``per_chunk`` with merged-away keys replaced by their surviving entity's key (one lookup per batch;
    two mentions that land on one key in a chunk become one, surface forms added)."""
    keys = sorted({m.key for mentions in per_chunk.values() for m in mentions})
    if not keys:
        return per_chunk
    moved = {str(r["id"]): str(r["target"]) for r in store.run("entity_redirect_get", {"ids": keys})}
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
