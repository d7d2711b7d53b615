"""Per-sample entity facts: how a sample's triples are stored for KG actions, and read back.

A sample's distinct triples are grouped by entity (each triple is listed under its head as an outgoing
fact and under its tail as an incoming one); the entities are spread over ``facts_bucket_count``
buckets by a stable hash of their folded name, and each bucket is one ``KGFacts`` node whose ``facts``
property is JSON: ``{"<name>": [out_rel, out_ent, in_rel, in_ent], ...}`` (aligned lists). An action
reads one bucket by key; the exact and the case-insensitive match of a name share a bucket.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from app.kg.keys import facts_bucket, facts_bucket_count, facts_key, fold
from app.store.base import GraphStore

Triple = tuple[str, str, str]
Adjacency = dict[str, tuple[list[str], list[str], list[str], list[str]]]
Bucket = dict[str, list[list[str]]]


@dataclass
class Facts:
    """One entity's triples inside one sample (aligned arrays), with lazily derived answers."""

    name: str
    out_rel: list[str]
    out_ent: list[str]
    in_rel: list[str]
    in_ent: list[str]
    _memo: dict[str, object] = field(default_factory=dict, repr=False)

    @property
    def weight(self) -> int:
        return len(self.out_rel) + len(self.in_rel) + 1

    def relations(self, kind: str) -> list[str]:
        """Sorted distinct relations: kind 'both', 'out' (entity is head) or 'in' (entity is tail)."""
        memo = self._memo.get(kind)
        if memo is None:
            if kind == "out":
                memo = sorted(set(self.out_rel))
            elif kind == "in":
                memo = sorted(set(self.in_rel))
            else:
                memo = sorted(set(self.out_rel) | set(self.in_rel))
            self._memo[kind] = memo
        return memo  # type: ignore[return-value]

    def entities(self, direction: str, relation: str) -> list[str]:
        """Sorted distinct tails ('out') or heads ('in') linked by ``relation``."""
        key = "map_" + direction
        table = self._memo.get(key)
        if table is None:
            rels, ents = (self.out_rel, self.out_ent) if direction == "out" else (self.in_rel, self.in_ent)
            grouped: dict[str, set[str]] = {}
            for rel, ent in zip(rels, ents, strict=False):
                grouped.setdefault(rel, set()).add(ent)
            table = {rel: sorted(values) for rel, values in grouped.items()}
            self._memo[key] = table
        return table.get(relation, [])  # type: ignore[attr-defined]


def adjacency(triples: Iterable[Triple]) -> Adjacency:
    """Entity -> (out_rel, out_ent, in_rel, in_ent), in the order of ``triples``."""
    adj: Adjacency = defaultdict(lambda: ([], [], [], []))
    for h, r, t in triples:
        out = adj[h]
        out[0].append(r)
        out[1].append(t)
        inc = adj[t]
        inc[2].append(r)
        inc[3].append(h)
    return adj


def encode_facts(skey: str, triples: list[Triple]) -> tuple[int, list[dict[str, Any]]]:
    """(bucket count, ``KGFacts`` rows ``{key, sample, facts}``) for a sample's distinct triples."""
    buckets = facts_bucket_count(len(triples))
    grouped: dict[int, dict[str, tuple[list[str], ...]]] = defaultdict(dict)
    for name, lists in adjacency(triples).items():
        grouped[facts_bucket(name, buckets)][name] = lists
    rows = [{"key": facts_key(skey, b), "sample": skey,
             "facts": json.dumps(group, ensure_ascii=False, separators=(",", ":"))}
            for b, group in sorted(grouped.items())]
    return buckets, rows


def decode_facts(text: str | None) -> Bucket:
    """A ``KGFacts.facts`` JSON text as ``{name: [out_rel, out_ent, in_rel, in_ent]}``."""
    return json.loads(text) if text else {}


def outgoing(bucket: Bucket) -> Iterable[Triple]:
    """Every triple of a bucket once (from its head's outgoing lists)."""
    for name, (out_rel, out_ent, _, _) in bucket.items():
        for rel, ent in zip(out_rel, out_ent, strict=False):
            yield name, rel, ent


def match_name(bucket: Bucket, name: str) -> str | None:
    """The stored name for ``name``: exact, else trimmed case-insensitive (smallest match wins)."""
    if name in bucket:
        return name
    folded = fold(name)
    matches = [stored for stored in bucket if fold(stored) == folded]
    return min(matches) if matches else None


def to_facts(bucket: Bucket, name: str | None) -> Facts | None:
    """The ``Facts`` of a stored ``name`` of ``bucket`` (None when absent)."""
    if name is None or name not in bucket:
        return None
    out_rel, out_ent, in_rel, in_ent = bucket[name]
    return Facts(name, out_rel, out_ent, in_rel, in_ent)


def fetch_buckets(store: GraphStore, keys: Iterable[str]) -> dict[str, Bucket]:
    """The ``KGFacts`` buckets for ``keys`` in one round trip (missing keys are absent)."""
    wanted = sorted(set(keys))
    if not wanted:
        return {}
    return {row["key"]: decode_facts(row["facts"]) for row in store.run("kg_facts_by_key", {"keys": wanted})}


def bucket_key(skey: str, buckets: int, name: str) -> str:
    """The key of the bucket that holds ``name`` in sample ``skey`` (split into ``buckets``)."""
    return facts_key(skey, facts_bucket(name, buckets))
