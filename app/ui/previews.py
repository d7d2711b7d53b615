"""Short text previews of chunks for the page's sources lists (no HTTP here)."""

from __future__ import annotations

from typing import Any

from app.core.errors import BadInput
from app.core.text import one_line
from app.documents.locations import location_label, location_of
from app.store.base import GraphStore

MAX_IDS = 50
PREVIEW_CHARS = 320


def chunk_previews(store: GraphStore, ids: list[str], chars: int = PREVIEW_CHARS) -> list[dict[str, Any]]:
    """``[{id, title, source, preview, location, location_label, section}]`` for the stored chunks among
    ``ids``, in the order asked.

    Ids not stored (external contexts, deleted chunks) are left out.
    """
    clean = [i.strip() for i in ids if isinstance(i, str) and i.strip()]
    if not clean:
        raise BadInput("ids: give at least one chunk id", field="ids")
    if len(clean) > MAX_IDS:
        raise BadInput(f"ids: at most {MAX_IDS} ids per request, got {len(clean)}", field="ids")
    rows = {r["id"]: r for r in store.run("chunk_get_by_ids", {"ids": list(dict.fromkeys(clean))})}
    out = []
    for cid in dict.fromkeys(clean):
        row = rows.get(cid)
        if row is None:
            continue
        preview = one_line(row.get("text"), chars)
        loc = location_of(row)
        out.append({"id": cid, "title": row.get("title"), "source": row.get("source"), "preview": preview,
                    "location": loc, "location_label": location_label(loc), "section": row.get("section")})
    return out
