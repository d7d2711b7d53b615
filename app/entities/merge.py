"""Merge duplicate document entities into one (POST /entities/merge).

Steps, each idempotent, in an order that a crash at any point is repaired by merging again (the
merged entity is deleted last):

1. an ``EntityRedirect {id: <merged key>, target}`` is written (older redirects to the merged key
   follow it), so a search for the merged name finds the survivor and a later ingest of text naming it
   adds its mentions to the survivor instead of re-creating it (``ingest.write`` applies redirects);
2. the survivor's ``aliases`` gain the merged entity's name and aliases;
3. MENTIONS move to the survivor (a chunk mentioning both keeps one edge, counts added);
4. CO_OCCURS counts are rebuilt for the survivor and every entity sharing a chunk with it;
   RELATES_TO (shared-entity links between nearby chunks) is recomputed for the affected sources;
5. ``freq`` is recomputed and the merged entity (no mentions left) is deleted;
6. the answer cache and the in-process BM25 index (chunk degrees) are told the graph changed.

REL edges join chunks, not entities, so a merge leaves them as they are. Merging a key that already
redirects to the target is a no-op (200); into itself 422; unknown 404; already merged elsewhere 409.
"""

from __future__ import annotations

from typing import Any

from app.core.errors import BadInput
from app.entities.lookup import clean_name, entity_key, get_entities, redirects
from app.services.container import Services
from ingest.relations import relates_rows
from ingest.write import GraphWriter

MAX_SOURCES = 100


def _keys(text: str) -> list[str]:
    return list(dict.fromkeys(k for k in (text, entity_key(text)) if k))


def _target(services: Services, value: Any) -> dict[str, Any]:
    text = clean_name(value, "target")
    found = get_entities(services.store, _keys(text))
    for key in _keys(text):
        if key in found:
            return found[key]
    moved = redirects(services.store, _keys(text))
    hint = f" (it was merged into {next(iter(moved.values()))!r})" if moved else ""
    raise BadInput(f"target: no entity {text!r}{hint}", status=404, field="target")


def _sources(value: Any) -> list[str]:
    items = value if isinstance(value, list) else [value]
    if not items or len(items) > MAX_SOURCES:
        raise BadInput(f"sources: give 1 to {MAX_SOURCES} entities to merge", field="sources")
    return [clean_name(v, "sources") for v in items]


def plan(
    services: Services, target_value: Any, source_values: Any
) -> tuple[dict[str, Any], list[str], list[str]]:
    """(target entity, keys to merge now, keys already merged into the target); raises 4xx BadInput."""
    target = _target(services, target_value)
    tid = str(target["id"])
    todo: list[str] = []
    done: list[str] = []
    for text in _sources(source_values):
        keys = _keys(text)
        found = get_entities(services.store, keys)
        key = next((k for k in keys if k in found), None)
        if key == tid:
            raise BadInput(
                f"sources: {text!r} is the target itself; an entity cannot be merged into itself",
                field="sources",
            )
        if key is not None:
            todo.append(key)
            continue
        moved = redirects(services.store, keys)
        hit = next((k for k in keys if k in moved), None)
        if hit is None:
            raise BadInput(f"sources: no entity {text!r}", status=404, field="sources")
        if moved[hit] != tid:
            raise BadInput(
                f"sources: {text!r} was already merged into {moved[hit]!r}, not {tid!r}",
                status=409,
                field="sources",
            )
        done.append(hit)
    return target, list(dict.fromkeys(todo)), list(dict.fromkeys(done))


def merge(services: Services, target_value: Any, source_values: Any) -> dict[str, Any]:
    """Merge the sources into the target; returns ``{target, merged, already_merged, counts}``."""
    target, todo, done = plan(services, target_value, source_values)
    tid = str(target["id"])
    counts: dict[str, int] = {"mentions_moved": 0, "cooccur_edges": 0, "relates_to_edges": 0}
    if todo:
        counts = _apply(services, tid, todo)
        from ingest.pipeline import notify_listeners

        notify_listeners(services)
    after = get_entities(services.store, [tid]).get(tid, target)
    return {
        "target": {
            "id": tid,
            "name": after.get("name"),
            "freq": after.get("freq"),
            "aliases": list(after.get("aliases") or []),
        },
        "merged": todo,
        "already_merged": done,
        **counts,
    }


def _apply(services: Services, tid: str, keys: list[str]) -> dict[str, int]:
    store, s = services.store, services.settings
    writer = GraphWriter(store, s.write_batch_size)
    rows = [{"source": k, "target": tid} for k in keys]
    store.run("entity_redirect_set", {"rows": rows})
    store.run("entity_redirect_follow", {"rows": rows})
    entities = get_entities(store, [tid, *keys])
    aliases = list(entities[tid].get("aliases") or [])
    for k in keys:
        for form in [entities[k].get("name"), *(entities[k].get("aliases") or [])]:
            if form and form not in aliases:
                aliases.append(form)
    store.run("entity_set_aliases", {"rows": [{"id": tid, "aliases": aliases}]})
    moved = store.run("entity_merge_mentions", {"rows": rows})
    affected = {str(r["id"]) for r in store.run("entity_comentioned", {"ids": [tid]})} | {tid, *keys}
    cooccur = writer.rebuild_cooccurs(s.ingest_cooccur_top_k, s.ingest_cooccur_min_count)  # whole graph
    relates = 0
    for r in store.run("entity_chunk_sources", {"ids": [tid]}):
        ids = [str(c["id"]) for c in writer.source_chunks_ordered(str(r["source"]))]
        writer.clear_relates(ids)
        new = relates_rows(ids, writer.chunk_entities(ids), s.relation_window)
        writer.relates(new)
        relates += len(new)
    writer.refresh_entities(sorted(affected))  # freq; the merged entities (no mentions left) are deleted
    return {
        "mentions_moved": int(moved[0]["moved"]) if moved else 0,
        "cooccur_edges": cooccur,
        "relates_to_edges": relates,
    }
