"""Answers a batch of KG-R1 actions as KG-R1's own server does (``?format=chat``; texts: :mod:`app.kg.kgr1`).

The order of its checks is kept: request checks, dataset, enabled action, extra argument, sample, entity
(the union of every case variant of the name in the sample), relation (in the dataset's vocabulary),
results. Store round trips per batch: (1) generation tokens of the datasets named (``cwq`` in any case
means ``CWQ``, as it normalises it), (2) only for a dataset whose relation vocabulary is not cached yet,
that vocabulary, (3) samples not cached with the fact buckets of the batch's names in them, (4) fact
buckets of other entities not cached (samples already cached); a warm batch makes none (see
:mod:`app.kg.service` for the generation check and :data:`app.kg.service.OFFLINE`).
``query_time`` is an item's compute time plus an equal share of the batch's store time.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass
from typing import Any

from app.kg import kgr1
from app.kg.cache import UNION, KGCache
from app.kg.keys import sample_key
from app.kg.kgr1 import ChatRequest, Observation
from app.kg.relation_format import format_relations
from app.kg.service import gather, holding, observe_generations
from app.store.base import GraphStore

_DIRECTION = {"rel_both": "both", "rel_in": "in", "rel_out": "out", "ent_in": "in", "ent_out": "out"}


@dataclass(frozen=True)
class ChatOptions:
    """``relation_format``: flat | full_indent | mixed | compact; ``actions``: those enabled, in order."""

    relation_format: str = "flat"
    actions: tuple[str, ...] = kgr1.ACTIONS


@dataclass
class _Batch:
    resolved: dict[str, str]  # dataset name as asked -> dataset name loaded
    available: list[str]  # loaded datasets, first loaded first (only read when one asked is not loaded)


def _candidates(dataset: str) -> list[str]:
    return ["CWQ", dataset] if dataset.lower() == "cwq" and dataset != "CWQ" else [dataset]


def _prefetch(store: GraphStore, cache: KGCache, reqs: list[ChatRequest],
              options: ChatOptions) -> tuple[_Batch, KGCache]:
    """The batch's datasets and a batch-private view with its samples, facts and vocabularies: the
    generation check and the (rare) vocabulary reads under the cache lock, samples and facts without it
    (:func:`app.kg.service.gather`)."""
    names = sorted({n for r in reqs for n in _candidates(r.dataset)})
    with holding(cache, store):
        current = observe_generations(store, cache, names)
        resolved = {}
        for req in reqs:
            found = next((n for n in _candidates(req.dataset) if current.get(n) is not None), None)
            if found is not None:
                resolved[req.dataset] = found
        available = []
        if any(r.dataset not in resolved for r in reqs):
            available = [row["name"] for row in store.run("kg_dataset_names")]
        active = [r for r in reqs if r.dataset in resolved and r.action in options.actions
                  and kgr1.extra_argument(r) is None]
        wanted = {resolved[r.dataset] for r in active if r.kind.startswith("ent_")}
        need_vocab = sorted(wanted - set(cache.vocab))
        if need_vocab:
            for row in store.run("kg_dataset_vocab_get", {"names": need_vocab}):
                relations = row.get("relations")
                if relations is None:  # not loaded from the KG-R1 layout: the relations of its samples
                    relations = [r["relation"] for r in store.run("kg_dataset_sample_relations",
                                                                    {"name": row["name"]})]
                cache.vocab[row["name"]] = frozenset(relations)
        vocab = {name: cache.vocab[name] for name in wanted if name in cache.vocab}
    keys = [(sample_key(resolved[r.dataset], r.sample_id), r.entity) for r in active]
    local = gather(store, cache, keys, union=True)
    local.vocab = vocab
    return _Batch(resolved, available), local


def _observe(req: ChatRequest, batch: _Batch, cache: KGCache, options: ChatOptions) -> Observation:
    dataset = batch.resolved.get(req.dataset)
    if dataset is None:
        return kgr1.dataset_not_supported(req.dataset, batch.available)
    if req.action not in options.actions:
        return kgr1.action_not_available(req.action, list(options.actions))
    extra = kgr1.extra_argument(req)
    if extra is not None:
        return extra
    skey = sample_key(dataset, req.sample_id)
    if cache.samples.get(skey) is None:
        return kgr1.sample_not_found(req)
    facts = cache.facts.get((skey, req.entity, UNION))
    if facts is None:
        return kgr1.entity_not_found(req)
    kind = req.kind
    if kind.startswith("ent_"):
        if req.relation not in cache.vocab.get(dataset, frozenset()):
            return kgr1.relation_not_found(req)
        return kgr1.entities_found(req, facts.entity_list(_DIRECTION[kind], req.relation or ""))
    if kind == "rel_cond":
        concept = (req.concept or "").lower().strip()
        chosen = [r for r in facts.relations("out") if "." in r and r.split(".")[0].lower() == concept]
        return kgr1.relations_found(req, ", ".join(chosen))
    relations = facts.relations(_DIRECTION[kind])
    if kind != "rel_both":  # it shuffles these two lists ("to handle truncation fairly")
        relations = random.sample(relations, len(relations))
    written = format_relations(relations, options.relation_format) if relations else ""
    return kgr1.relations_found(req, written)


def run_chat(store: GraphStore, cache: KGCache, items: list[dict[str, Any]],
             options: ChatOptions | None = None) -> list[dict[str, Any]]:
    """Answer every item (same order, same length) in KG-R1's answer object."""
    options = options or ChatOptions()
    checked = [kgr1.check_item(item) for item in items]
    reqs = [c for c in checked if isinstance(c, ChatRequest)]
    t0 = time.perf_counter()
    batch, work = _Batch({}, []), KGCache(0)
    if reqs:
        batch, work = _prefetch(store, cache if cache.enabled else KGCache(0), reqs, options)
    share = (time.perf_counter() - t0) / len(reqs) if reqs else 0.0
    out = []
    for check in checked:
        t1 = time.perf_counter()
        if isinstance(check, Observation):
            out.append(kgr1.answer(check, 0.0))
            continue
        try:
            obs = _observe(check, batch, work, options)
        except Exception as exc:  # noqa: BLE001 - one bad item never fails the batch
            obs = Observation(f"KG server error: {type(exc).__name__}: {exc}", kgr1.SERVER_ERROR,
                              check.action)
        out.append(kgr1.answer(obs, time.perf_counter() - t1 + share))
    return out
