"""Citations a person can check: where a chunk came from, as a ``location`` object.

``{"page": 3}`` (``"page_end": 4`` when the chunk runs onto later pages) for PDF, ``{"line_start": 12,
"line_end": 30}`` for text and Markdown (1-based, inclusive), ``{"record": 4}`` for JSON/JSONL (0-based
list item / line / key; ``"paragraph"`` too inside HotpotQA/MuSiQue question records). Stored as flat
Chunk properties (see docs/SCHEMA.md) and rebuilt here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from app.store.base import GraphStore


def location_of(row: Mapping[str, Any]) -> dict[str, int] | None:
    """The ``location`` object of a row holding the Chunk's location properties (None when it has none)."""
    if row.get("page") is not None:
        loc = {"page": int(row["page"])}
        if row.get("page_end") is not None and int(row["page_end"]) != loc["page"]:
            loc["page_end"] = int(row["page_end"])
        return loc
    if row.get("line_start") is not None:
        start = int(row["line_start"])
        return {"line_start": start, "line_end": int(row.get("line_end") or start)}
    if row.get("record") is not None:
        loc = {"record": int(row["record"])}
        if row.get("paragraph") is not None:
            loc["paragraph"] = int(row["paragraph"])
        return loc
    return None


def location_label(loc: Mapping[str, int] | None) -> str:
    """What the page shows: ``p. 3``, ``pp. 3-4``, ``lines 12-30``, ``record 4`` ('' when unknown)."""
    if not loc:
        return ""
    if "page" in loc:
        return f"pp. {loc['page']}-{loc['page_end']}" if "page_end" in loc else f"p. {loc['page']}"
    if "line_start" in loc:
        a, b = loc["line_start"], loc["line_end"]
        return f"line {a}" if a == b else f"lines {a}-{b}"
    if "record" in loc:
        return f"record {loc['record']}" + (f", paragraph {loc['paragraph']}" if "paragraph" in loc else "")
    return ""


def trailer_fields(loc: Mapping[str, int] | None) -> str:
    """Extra ``key=value`` fields for a stream trailer line, after rank/reason/score:
    ``, page=3`` / ``, pages=3-4`` / ``, lines=12-30`` / ``, record=4`` ('' when unknown)."""
    if not loc:
        return ""
    if "page" in loc:
        return f", pages={loc['page']}-{loc['page_end']}" if "page_end" in loc else f", page={loc['page']}"
    if "line_start" in loc:
        return f", lines={loc['line_start']}-{loc['line_end']}"
    if "record" in loc:
        return f", record={loc['record']}" + (f", paragraph={loc['paragraph']}" if "paragraph" in loc else "")
    return ""


def chunk_locations(store: GraphStore, ids: Iterable[str]) -> dict[str, dict[str, Any]]:
    """``{chunk id: {"location": {...} | None, "section": str | None}}`` for the stored chunks among ``ids``
    (one round trip)."""
    wanted = list(dict.fromkeys(i for i in ids if i))
    if not wanted:
        return {}
    return {str(r["id"]): {"location": location_of(r), "section": r.get("section")}
            for r in store.run("chunk_locations", {"ids": wanted})}


def add_locations(store: GraphStore, items: list[dict[str, Any]]) -> None:
    """Set ``location`` and ``section`` on every item whose ``id`` is a stored chunk (others untouched)."""
    found = chunk_locations(store, (str(i.get("id") or "") for i in items))
    for item in items:
        hit = found.get(str(item.get("id") or ""))
        if hit is not None:
            item["location"] = hit["location"]
            item["section"] = hit["section"]
