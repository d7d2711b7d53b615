"""Answers a batch of KG-R1 actions in the seed's shape with at most 3 store round trips.

Round trips per batch: (1) generation tokens of the datasets touched (skipped while they are fresh,
:class:`app.kg.cache.KGCache`), (2) samples not cached, with the fact buckets (:mod:`app.kg.facts`) of
the batch's entities in them, (3) the buckets of entities not cached in samples that were (none when
every sample was new): the exact and the case-insensitive match of a name share a bucket. A warm
batch makes none: given :data:`OFFLINE` as its store, it is answered on the caller's thread (the API's
event loop) or raises :class:`NeedsStore` at its first round trip, and is then run again with the
store on a worker thread. ``query_time`` of an item is its own compute time plus an equal share of the
batch's store time.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, cast

from app.kg.actions import Action, parse_item
from app.kg.cache import UNION, FactsKey, KGCache, SampleInfo
from app.kg.combine import combining
from app.kg.facts import Facts, resolve_names
from app.kg.keys import bucket_hash, facts_key, fold
from app.store.base import GraphStore

SEED = "seed"  # answer shapes of a list body: the seed's (NeoRAG's own) or KG-R1's chat object
CHAT = "chat"


class NeedsStore(Exception):  # noqa: N818 - a signal, not an error
    """A batch run with :data:`OFFLINE` needs a store round trip (or the cache lock is busy)."""


class _Offline:
    """Stands in for the store when a batch should be answered from the cache alone."""

    def run(self, name: str, params: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        raise NeedsStore(name)


OFFLINE = cast(GraphStore, _Offline())


@contextmanager
def holding(cache: KGCache, store: GraphStore) -> Iterator[None]:
    """Hold the cache lock for a batch; with :data:`OFFLINE` never wait for it (raise NeedsStore)."""
    if not cache.lock.acquire(blocking=store is not OFFLINE):
        raise NeedsStore("cache lock busy")
    try:
        yield
    finally:
        cache.lock.release()


def observe_generations(store: GraphStore, cache: KGCache, datasets: list[str]) -> dict[str, str | None]:
    """The generation tokens of ``datasets`` (None: not loaded), read unless all are fresh; a changed
    token clears ``cache``."""
    now = time.monotonic()
    if not cache.fresh(datasets, now):
        rows = store.run("kg_dataset_generations", {"names": datasets})
        current: dict[str, str | None] = dict.fromkeys(datasets)
        current.update({r["name"]: r["generation"] for r in rows})
        cache.observe_generations(current)
        cache.checked.update(dict.fromkeys(datasets, now))
    return {d: cache.generations.get(d) for d in datasets}


def fetch_samples(store: GraphStore, cache: KGCache, pairs: list[tuple[str, str]]) -> dict[str, str]:
    """Bring the samples of ``(sample key, entity)`` pairs not cached into ``cache`` together with the
    fact buckets of those pairs' entities (one round trip, none when every sample is cached); returns the
    buckets read (bucket key -> text) for :func:`fetch_facts`."""
    need_samples = sorted({k for k, _ in pairs if k not in cache.samples})
    texts: dict[str, str] = {}
    if not need_samples:
        return texts
    hashes: dict[str, set[int]] = {k: set() for k in need_samples}
    for skey, entity in pairs:
        if skey in hashes:
            hashes[skey].add(bucket_hash(fold(entity)))
    items = [{"s": k, "h": sorted(hashes[k])} for k in need_samples]
    rows = store.run("kg_sample_lookup_with_facts", {"samples": items})
    found = {sample["key"]: sample for row in rows for sample in row["samples"]}
    for key in need_samples:
        row = found.get(key)
        info = None
        if row is not None and int(row.get("n_triples") or 0) > 0:
            info = SampleInfo(key, int(row["n_triples"]), frozenset(row.get("relations") or []),
                              int(row.get("buckets") or 1))
            texts.update({facts_key(key, int(b)): text or "" for b, text in row["found"] if b is not None})
        cache.put_sample(key, info)
    return texts


def fetch_facts(store: GraphStore, cache: KGCache, pairs: list[tuple[str, str]], union: bool = False,
                fetched: dict[str, str] | None = None) -> None:
    """Bring the facts of ``(sample key, entity)`` pairs not cached into ``cache`` (one round trip for
    the buckets not in ``fetched``); ``union`` resolves them with KG-R1's matching, cached under
    ``(sample key, entity, "union")``."""
    wanted: dict[FactsKey, tuple[str, int, str]] = {}  # cache key -> where to look
    for skey, entity in pairs:
        key: FactsKey = (skey, entity, UNION) if union else (skey, entity)
        info = cache.samples.get(skey)
        if key not in wanted and info is not None and key not in cache.facts:
            wanted[key] = (skey, info.buckets, entity)
    for key, facts in resolve_names(store, wanted, union=wanted if union else (), fetched=fetched).items():
        cache.put_facts(key, facts)


def gather(store: GraphStore, cache: KGCache, pairs: list[tuple[str, str]], union: bool = False) -> KGCache:
    """A batch-private view holding every sample and facts entry of ``pairs``: the cached ones copied
    under the cache lock, the others fetched WITHOUT it (other batches are answered meanwhile: a store
    serving several readers at once serves them side by side; reads issued while another batch's is in
flight go out together, :mod:`app.kg.combine`), then added to ``cache`` unless a load
    changed a generation in between. With :data:`OFFLINE`, raises :class:`NeedsStore` on a miss."""
    with holding(cache, store):
        local = cache.view(pairs, union)
    reads = store if store is OFFLINE else combining(store)  # concurrent batches share round trips
    fetched = fetch_samples(reads, local, pairs)
    fetch_facts(reads, local, pairs, union=union, fetched=fetched)
    if len(local.samples) > len(local.known[0]) or len(local.facts) > len(local.known[1]):
        with holding(cache, store):
            cache.absorb(local)
    return local


def _prefetch(store: GraphStore, cache: KGCache, actions: list[Action]) -> KGCache:
    """Every sample and entity the batch needs, in a batch-private view (:func:`gather`)."""
    with holding(cache, store):
        observe_generations(store, cache, sorted({a.dataset for a in actions}))
    return gather(store, cache, [(a.sample_key, a.entity) for a in actions])


def _answer(action: Action, info: SampleInfo, facts: Facts | None) -> list[str]:
    """The results of a valid action on a loaded sample (empty: entity or relation not found)."""
    kind = action.spec.kind
    if facts is None:
        return []
    if kind == "rel_both":
        return facts.relations("both")
    if kind == "rel_out":
        return facts.relations("out")
    if kind == "rel_in":
        return facts.relations("in")
    if kind == "rel_cond":
        concept = (action.concept or "").strip().lower()
        return [r for r in facts.relations("out") if r.split(".", 1)[0].lower() == concept]
    relation = action.relation or ""
    if relation not in info.relations and relation.strip() in info.relations:
        relation = relation.strip()
    if relation not in info.relations:
        return []
    return facts.entities("out" if kind == "ent_out" else "in", relation)


def run_actions(store: GraphStore, cache: KGCache, items: list[dict[str, Any]]) -> list[Any]:
    """Answer every item (same order, same length) in the seed's shape; invalid items become per-item
    errors. (KG-R1's chat shape: :func:`app.kg.chat.run_chat`.)"""
    parsed = [parse_item(item) for item in items]
    actions = [p for p in parsed if isinstance(p, Action)]
    work = KGCache(0)
    store_time = 0.0
    if actions:
        t0 = time.perf_counter()
        work = _prefetch(store, cache if cache.enabled else KGCache(0), actions)
        store_time = time.perf_counter() - t0
    share = store_time / len(actions) if actions else 0.0
    out: list[Any] = []
    for action in parsed:
        t0 = time.perf_counter()
        if not isinstance(action, Action):
            out.append(_error(action, time.perf_counter() - t0))
            continue
        info = work.samples.get(action.sample_key)
        if info is None:
            msg = f"Subgraph for {action.sample_id} could not be loaded or is empty."
            out.append({"results": [{"error": msg}], "query_time": time.perf_counter() - t0 + share,
                        "total_results": 0})
            continue
        facts = work.facts.get((action.sample_key, action.entity))
        try:
            results = _answer(action, info, facts)
        except Exception as exc:  # noqa: BLE001 - one bad item never fails the batch
            out.append(_error(f"KG server error: {type(exc).__name__}: {exc}",
                              time.perf_counter() - t0 + share))
            continue
        out.append({"results": [{action.spec.result_key: results}],
                    "query_time": time.perf_counter() - t0 + share, "total_results": len(results)})
    return out


def _error(message: str, elapsed: float) -> dict[str, Any]:
    return {"error": message, "query_time": elapsed, "total_results": 0}
