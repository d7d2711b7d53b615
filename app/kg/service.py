"""Answers a batch of KG-R1 actions with a bounded number of store round trips (at most 3).

Round trips per batch: (1) generation tokens of the datasets touched, (2) samples not cached,
(3) the fact buckets (:mod:`app.kg.facts`) of the entities not cached: the exact and the
case-insensitive match of a name share a bucket. With a warm cache only (1) runs. ``query_time``
of an item is its own compute time plus an equal share of the batch's store time.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

from app.kg.actions import Action, parse_item
from app.kg.cache import KGCache, SampleInfo
from app.kg.facts import Facts, resolve_names
from app.store.base import GraphStore

SEED = "seed"
CHAT = "chat"


def _prefetch(store: GraphStore, cache: KGCache, actions: list[Action]) -> None:
    """Bring every sample and entity the batch needs into ``cache`` (caller holds the lock)."""
    datasets = sorted({a.dataset for a in actions})
    rows = store.run("kg_dataset_generations", {"names": datasets})
    current: dict[str, str | None] = dict.fromkeys(datasets)
    current.update({r["name"]: r["generation"] for r in rows})
    cache.observe_generations(current)

    need_samples = sorted({a.sample_key for a in actions if a.sample_key not in cache.samples})
    if need_samples:
        found = {r["key"]: r for r in store.run("kg_sample_lookup", {"keys": need_samples})}
        for key in need_samples:
            row = found.get(key)
            info = None
            if row is not None and int(row.get("n_triples") or 0) > 0:
                info = SampleInfo(key, int(row["n_triples"]), frozenset(row.get("relations") or []),
                                  int(row.get("buckets") or 1))
            cache.put_sample(key, info)

    wanted: dict[tuple[str, str], tuple[str, int, str]] = {}  # (sample key, entity) -> where to look
    for a in actions:
        pair = (a.sample_key, a.entity)
        info = cache.samples.get(a.sample_key)
        if pair not in wanted and info is not None and pair not in cache.facts:
            wanted[pair] = (a.sample_key, info.buckets, a.entity)
    for pair, facts in resolve_names(store, wanted).items():
        cache.put_facts(pair, facts)


def _answer(action: Action, info: SampleInfo, facts: Facts | None) -> tuple[list[str], str | None]:
    """(results, error_type or None) for a valid action on a loaded sample."""
    kind = action.spec.kind
    if facts is None:
        return [], "KG_ENTITY_NOT_FOUND"
    if kind == "rel_both":
        return facts.relations("both"), None
    if kind == "rel_out":
        return facts.relations("out"), None
    if kind == "rel_in":
        return facts.relations("in"), None
    if kind == "rel_cond":
        concept = (action.concept or "").strip().lower()
        return [r for r in facts.relations("out") if r.split(".", 1)[0].lower() == concept], None
    relation = action.relation or ""
    if relation not in info.relations and relation.strip() in info.relations:
        relation = relation.strip()
    if relation not in info.relations:
        return [], "KG_RELATION_NOT_FOUND"
    return facts.entities("out" if kind == "ent_out" else "in", relation), None


def run_actions(store: GraphStore, cache: KGCache, items: list[dict[str, Any]], fmt: str = SEED) -> list[Any]:
    """Answer every item (same order, same length); invalid items become per-item errors."""
    parsed = [parse_item(item) for item in items]
    actions = [p for p in parsed if isinstance(p, Action)]
    work = cache if cache.enabled else KGCache(0)
    store_time = 0.0
    with work.lock:
        if actions:
            t0 = time.perf_counter()
            _prefetch(store, work, actions)
            store_time = time.perf_counter() - t0
        share = store_time / len(actions) if actions else 0.0
        out: list[Any] = []
        for item, action in zip(items, parsed, strict=True):
            t0 = time.perf_counter()
            if not isinstance(action, Action):
                out.append(_format_error(item, action, fmt, time.perf_counter() - t0))
                continue
            info = work.samples.get(action.sample_key)
            if info is None:
                results: list[str] = []
                error_type: str | None = "KG_SAMPLE_NOT_FOUND"
            else:
                facts = work.facts.get((action.sample_key, action.entity))
                try:
                    results, error_type = _answer(action, info, facts)
                except Exception as exc:  # noqa: BLE001 - one bad item never fails the batch
                    out.append(_format_error(item, f"KG server error: {type(exc).__name__}: {exc}", fmt,
                                             time.perf_counter() - t0 + share, "KG_SERVER_ERROR"))
                    continue
            elapsed = time.perf_counter() - t0 + share
            out.append(_format(action, results, error_type, fmt, elapsed))
    return out


def _format_error(item: dict[str, Any], message: str, fmt: str, elapsed: float,
                  error_type: str = "KG_FORMAT_ERROR") -> dict[str, Any]:
    if fmt == CHAT:
        raw = item.get("action_type")
        return chat_item(str(raw) if raw is not None else None, item, message, error_type, 0, elapsed)
    return {"error": message, "query_time": elapsed, "total_results": 0}


def _format(action: Action, results: list[str], error_type: str | None, fmt: str,
            elapsed: float) -> dict[str, Any]:
    key = action.spec.result_key
    if fmt != CHAT:
        if error_type == "KG_SAMPLE_NOT_FOUND":
            msg = f"Subgraph for {action.sample_id} could not be loaded or is empty."
            return {"results": [{"error": msg}], "query_time": elapsed, "total_results": 0}
        return {"results": [{key: results}], "query_time": elapsed, "total_results": len(results)}
    item = {"dataset_name": action.dataset, "sample_id": action.sample_id, "entity_id": action.entity,
            "relation": action.relation}
    if error_type == "KG_SAMPLE_NOT_FOUND":
        text = f'Sample "{action.sample_id}" not found in KG'
    elif error_type == "KG_ENTITY_NOT_FOUND":
        text = f'Entity "{action.entity}" not found in KG'
    elif error_type == "KG_RELATION_NOT_FOUND":
        text = f'Relation "{action.relation}" not found in KG'
    else:
        label = key.replace("_", " ")
        text = f"Found {label}: {', '.join(results)}." if results else f"No {label} found."
        error_type = None if results else "KG_NO_RESULTS"
    return chat_item(action.spec.name, item, text, error_type, len(results), elapsed)


def chat_item(action_type: str | None, item: dict[str, Any], content: str, error_type: str | None,
              total: int, elapsed: float) -> dict[str, Any]:
    """One answer in the newer KG-R1 chat-completion shape (``object: "kg_retrieval"``)."""
    ok = error_type is None
    return {
        "id": f"kgret-{uuid.uuid4().hex[:24]}",
        "object": "kg_retrieval",
        "created": int(time.time()),
        "model": "neorag-kg",
        "success": ok,
        "action": action_type,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                     "logprobs": None, "finish_reason": "stop" if ok else "error"}],
        "usage": {},
        "kg_metadata": {
            "action_type": action_type, "dataset_name": item.get("dataset_name"),
            "sample_id": item.get("sample_id"), "entity_id": item.get("entity_id"),
            "relation": item.get("relation"), "success": ok,
            "error_type": error_type or "KG_SUCCESS", "total_results": total, "query_time": elapsed,
        },
    }
