"""Citations a person can check: where a chunk came from, as a ``location`` object.

``{"page": 3}`` (``"page_end": 4`` when the chunk runs onto later pages) for PDF, ``{"line_start": 12,
"line_end": 30}`` for text and Markdown (1-based, inclusive), ``{"record": 4}`` for JSON/JSONL (0-based
list item / line / key; ``"paragraph"`` too inside HotpotQA/MuSiQue question records). Stored as flat
Chunk properties (see docs/SCHEMA.md) and rebuilt here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any


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


def located(row: Mapping[str, Any]) -> dict[str, Any]:
    """``{"location": {...} | None, "section": str | None}`` of a stored chunk's row (chunk_get_by_ids)."""
    return {"location": location_of(row), "section": row.get("section")}


def add_locations(items: list[dict[str, Any]], found: Iterable[Mapping[str, Any] | None]) -> None:
    """Set ``location`` and ``section`` on each item from its ``located`` (read with the chunk's text); an
    item whose chunk was not found (None) is left untouched. ``found`` runs parallel to ``items``."""
    for item, hit in zip(items, found, strict=True):
        if hit is not None:
            item["location"] = hit["location"]
            item["section"] = hit["section"]
