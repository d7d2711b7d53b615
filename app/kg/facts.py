"""Per-sample entity facts: how a sample's triples are stored for KG actions, and read back.

A sample's distinct triples are grouped by entity (each triple is listed under its head as an outgoing
fact and under its tail as an incoming one); the entities are spread over ``facts_bucket_count``
buckets by a stable hash of their folded name, and each bucket is one ``KGFacts`` node whose ``facts``
property is JSON Lines, one entity per line: ``["<name>", out_rel, out_ent, in_rel, in_ent]`` (aligned
lists). ``resolve_names`` is the one reader: it fetches the buckets a batch needs in one round trip and
decodes only each entity's line (found by its JSON-encoded name at a line start; JSON never leaves a
raw newline inside a value); the exact and the case-insensitive match of a name share a bucket.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Hashable, Iterable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from app.kg.keys import facts_bucket, facts_bucket_count, facts_key, fold
from app.store.base import GraphStore

Triple = tuple[str, str, str]
Adjacency = dict[str, tuple[list[str], list[str], list[str], list[str]]]
Bucket = dict[str, list[list[str]]]
K = TypeVar("K", bound=Hashable)


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


def _dumps(value: object) -> str:
    """Compact JSON with non-ASCII kept; JSON escapes control characters, so a raw newline ends a line."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def encode_facts(skey: str, triples: list[Triple]) -> tuple[int, list[dict[str, Any]]]:
    """(bucket count, ``KGFacts`` rows ``{key, sample, facts}``) for a sample's distinct triples."""
    buckets = facts_bucket_count(len(triples))
    grouped: dict[int, list[str]] = defaultdict(list)
    for name, lists in sorted(adjacency(triples).items()):
        grouped[facts_bucket(name, buckets)].append(_dumps([name, *lists]))
    rows = [{"key": facts_key(skey, b), "sample": skey, "facts": "\n".join(lines)}
            for b, lines in sorted(grouped.items())]
    return buckets, rows


def decode_facts(text: str | None) -> Bucket:
    """A whole ``KGFacts.facts`` text as ``{name: [out_rel, out_ent, in_rel, in_ent]}``."""
    out: Bucket = {}
    for line in text.split("\n") if text else []:
        name, *lists = json.loads(line)
        out[name] = lists
    return out


def outgoing(text: str | None) -> Iterable[Triple]:
    """Every triple of a bucket once (from its head's outgoing lists)."""
    for name, (out_rel, out_ent, _, _) in decode_facts(text).items():
        for rel, ent in zip(out_rel, out_ent, strict=False):
            yield name, rel, ent


def _exact(text: str, name: str) -> Facts | None:
    """The line of exactly ``name`` (C-speed search; only that line is decoded)."""
    needle = "[" + _dumps(name) + ","
    if text.startswith(needle):
        start = 0
    else:
        at = text.find("\n" + needle)
        if at < 0:
            return None
        start = at + 1
    end = text.find("\n", start)
    found, out_rel, out_ent, in_rel, in_ent = json.loads(text[start:end if end >= 0 else len(text)])
    return Facts(found, out_rel, out_ent, in_rel, in_ent)


def resolve_facts(text: str | None, name: str) -> Facts | None:
    """``name``'s facts in a bucket: exact, else trimmed case-insensitive (smallest match wins)."""
    if not text:
        return None
    exact = _exact(text, name)
    if exact is not None:
        return exact
    folded = fold(name)
    bucket = decode_facts(text)
    matches = [stored for stored in bucket if fold(stored) == folded]
    if not matches:
        return None
    stored = min(matches)
    out_rel, out_ent, in_rel, in_ent = bucket[stored]
    return Facts(stored, out_rel, out_ent, in_rel, in_ent)


def resolve_names(store: GraphStore, wanted: dict[K, tuple[str, int, str]]) -> dict[K, Facts | None]:
    """Facts for each ``(sample key, bucket count, name)`` of ``wanted``, fetching every bucket needed
    in one round trip (none when nothing is wanted); a name not in its sample resolves to None."""
    keys = {item: facts_key(skey, facts_bucket(name, buckets))
            for item, (skey, buckets, name) in wanted.items()}
    texts: dict[str, str] = {}
    if keys:
        rows = store.run("kg_facts_by_key", {"keys": sorted(set(keys.values()))})
        texts = {row["key"]: row["facts"] or "" for row in rows}
    return {item: resolve_facts(texts.get(key), wanted[item][2]) for item, key in keys.items()}
