"""Find a document entity by what a person types: its name, any surface form, its key, or the name of
an entity that was merged into it (``EntityRedirect``)."""

from __future__ import annotations

from typing import Any

from app.core.errors import BadInput
from app.store.base import GraphStore
from ingest.normalise import normalise

MAX_NAME_CHARS = 300
MAX_SUGGESTIONS = 50


def clean_name(value: Any, field: str = "entity") -> str:
    """The trimmed name; 422 naming ``field`` when empty, not text, or too long."""
    if not isinstance(value, str) or not value.strip():
        raise BadInput(f"{field}: give an entity name", field=field)
    text = value.strip()
    if len(text) > MAX_NAME_CHARS:
        raise BadInput(f"{field}: at most {MAX_NAME_CHARS} characters", field=field)
    return text


def entity_key(name: str) -> str:
    """The normalised key of a name (the same rule as ingest's ``Entity.id``)."""
    return normalise(name)


def get_entities(store: GraphStore, ids: list[str]) -> dict[str, dict[str, Any]]:
    """``{id: {id, name, freq, aliases}}`` for the stored ones among ``ids``."""
    if not ids:
        return {}
    return {str(r["id"]): r for r in store.run("graph_entity_get", {"ids": list(dict.fromkeys(ids))})}


def redirects(store: GraphStore, keys: list[str]) -> dict[str, str]:
    """``{merged-away key: surviving entity id}`` for the keys that were merged into another entity."""
    if not keys:
        return {}
    return {
        str(r["id"]): str(r["target"])
        for r in store.run("entity_redirect_get", {"ids": list(dict.fromkeys(keys))})
    }


def resolve(store: GraphStore, text: str) -> dict[str, Any] | None:
    """The entity ``text`` names (as typed, or its normalised key), following merges; None if unknown."""
    candidates = list(dict.fromkeys(k for k in (text, entity_key(text)) if k))
    found = get_entities(store, candidates)
    for key in candidates:
        if key in found:
            return found[key]
    moved = redirects(store, candidates)
    targets = get_entities(store, list(moved.values()))
    for key in candidates:
        if key in moved and moved[key] in targets:
            return {**targets[moved[key]], "merged_from": key}
    return None


def search(store: GraphStore, text: Any, limit: int = 10) -> list[dict[str, Any]]:
    """Suggestions for a search box: entities whose key contains the typed text, prefix matches first."""
    typed = clean_name(text, "q")
    if not 1 <= limit <= MAX_SUGGESTIONS:
        raise BadInput(f"limit: between 1 and {MAX_SUGGESTIONS}", field="limit")
    key = entity_key(typed) or typed.casefold()
    rows = store.run("entity_search", {"text": key, "limit": limit})
    return [
        {
            "id": r["id"],
            "name": r["name"],
            "freq": r.get("freq"),
            "aliases": list(r.get("aliases") or [])[:10],
        }
        for r in rows
    ]
