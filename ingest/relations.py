"""Stage 5, relations without an LLM: RELATES_TO between chunks sharing entities in the window.

The window runs over a source's chunks in source order (``Chunk.pos``): chunks at most
``window`` positions apart that share at least one entity get ``RELATES_TO`` from the earlier
to the later, with ``shared`` = number of shared entities and ``weight`` = Jaccard overlap of
their entity sets. (CO_OCCURS, bounded per entity, is recomputed by ``ingest/cooccur.py``.)
"""

from __future__ import annotations

from typing import Any


def relates_rows(ordered_ids: list[str], entities: dict[str, list[str]], window: int) -> list[dict[str, Any]]:
    """RELATES_TO rows ``{a, b, weight, shared}`` for one source."""
    rows = []
    sets = [set(entities.get(cid, ())) for cid in ordered_ids]
    for j in range(1, len(ordered_ids)):
        if not sets[j]:
            continue
        for i in range(max(0, j - window), j):
            shared = len(sets[i] & sets[j])
            if shared:
                union = len(sets[i] | sets[j])
                rows.append({"a": ordered_ids[i], "b": ordered_ids[j], "shared": shared,
                             "weight": round(shared / union, 4)})
    return rows
