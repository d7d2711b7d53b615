"""Per-sample entity facts: how a sample's triples are stored for KG actions, and read back.

A sample's distinct triples are grouped by entity (each triple is listed under its head as an outgoing
fact and under its tail as an incoming one); the entities are spread over ``facts_bucket_count``
buckets by a stable hash of their folded name, and each bucket is one ``KGFacts`` node whose ``facts``
property is JSON Lines, one entity per line: ``["<name>", out_rel, out_ent, in_rel, in_ent]`` (aligned
lists), plus a sixth element, an object, only where needed (issue 18): ``v`` the sample's other names
with the same folded form, ``x`` 1 when the name is in triples but not in the sample's entity list
(KG-R1 layout), ``o`` / ``i`` ``[[relation, entity, n], ...]`` when n > 1 distinct KG-R1 entity entries
of the folded name's group share a name (their server lists such a name n times).
``resolve_names`` is the one reader: it fetches the buckets a batch needs in one round trip and
decodes only each entity's line (found by its JSON-encoded name at a line start; JSON never leaves a
raw newline inside a value); the exact and the case-insensitive match of a name share a bucket, so the
union of a name's case variants (KG-R1's matching) costs one more line search per variant, no decode.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Collection, Hashable, Iterable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from app.kg.keys import bucket_of_folded, facts_bucket, facts_bucket_count, facts_key, fold
from app.store.base import GraphStore

Triple = tuple[str, str, str]
Adjacency = dict[str, tuple[list[str], list[str], list[str], list[str]]]
Bucket = dict[str, list[list[str]]]
K = TypeVar("K", bound=Hashable)
Repeats = dict[tuple[str, str], int]


@dataclass
class FactsExtra:
    """What a sample holds beyond its triples (KG-R1 layout: its server matches vocabulary entries)."""

    isolated: list[str] = field(default_factory=list)  # sample entities that are in no triple
    hidden: set[str] = field(default_factory=set)  # names in triples that no entity of the sample carries
    repeats_out: dict[tuple[str, str, str], int] = field(default_factory=dict)  # (folded head, r, tail): n>1
    repeats_in: dict[tuple[str, str, str], int] = field(default_factory=dict)  # (folded tail, r, head): n>1


@dataclass
class Facts:
    """One entity's triples inside one sample (aligned arrays), with lazily derived answers."""

    name: str
    out_rel: list[str]
    out_ent: list[str]
    in_rel: list[str]
    in_ent: list[str]
    _memo: dict[str, object] = field(default_factory=dict, repr=False)
    repeats_out: Repeats = field(default_factory=dict, repr=False)
    repeats_in: Repeats = field(default_factory=dict, repr=False)

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

    def entity_list(self, direction: str, relation: str) -> list[str]:
        """:meth:`entities` with a name repeated once per distinct KG-R1 entry carrying it (sorted)."""
        names = self.entities(direction, relation)
        repeats = self.repeats_out if direction == "out" else self.repeats_in
        if not repeats:
            return names
        return sorted(n for name in names for n in [name] * repeats.get((relation, name), 1))


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


_encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode  # built once, not per call


def _dumps(value: object) -> str:
    """Compact JSON with non-ASCII kept; JSON escapes control characters, so a raw newline ends a line."""
    return _encode(value)


def _repeats_by_fold(extra: FactsExtra) -> dict[str, dict[str, list[list[Any]]]]:
    """``{folded name: {"o"|"i": [[relation, entity, n], ...]}}`` from a sample's repeat counts."""
    out: dict[str, dict[str, list[list[Any]]]] = defaultdict(dict)
    for key, repeats in (("o", extra.repeats_out), ("i", extra.repeats_in)):
        for (folded, rel, ent), n in sorted(repeats.items()):
            out[folded].setdefault(key, []).append([rel, ent, n])
    return out


def encode_facts(skey: str, triples: list[Triple],
                 extra: FactsExtra | None = None) -> tuple[int, list[dict[str, Any]]]:
    """(bucket count, ``KGFacts`` rows ``{key, sample, facts}``) for a sample's distinct triples, plus
    lines for ``extra.isolated`` entities and the optional per-line object (see the module docstring)."""
    buckets = facts_bucket_count(len(triples))
    adj = adjacency(triples)
    for name in extra.isolated if extra is not None else []:
        adj[name]  # noqa: B018 - an entity without triples gets a line with empty lists
    folded_of = {name: fold(name) for name in adj}
    folds: dict[str, list[str]] = defaultdict(list)
    if len(set(folded_of.values())) < len(folded_of):  # some names differ only in case or spaces
        for name, folded in folded_of.items():
            folds[folded].append(name)
    repeats = _repeats_by_fold(extra) if extra is not None else {}
    hidden = extra.hidden if extra is not None else set()
    grouped: dict[int, list[str]] = defaultdict(list)
    for name, lists in sorted(adj.items()):
        folded = folded_of[name]
        group = folds.get(folded, ())
        meta: dict[str, Any] | None = None
        if len(group) > 1 or folded in repeats or name in hidden:  # rare: most lines carry no object
            meta = dict(repeats.get(folded, {}))
            if len(group) > 1:
                meta["v"] = [v for v in group if v != name]
            if name in hidden:
                meta["x"] = 1
        line = _dumps([name, *lists, meta] if meta else [name, *lists])
        grouped[bucket_of_folded(folded, buckets)].append(line)
    rows = [{"key": facts_key(skey, b), "sample": skey, "facts": "\n".join(lines)}
            for b, lines in sorted(grouped.items())]
    return buckets, rows


def decode_facts(text: str | None) -> Bucket:
    """A whole ``KGFacts.facts`` text as ``{name: [out_rel, out_ent, in_rel, in_ent]}``."""
    out: Bucket = {}
    for line in text.split("\n") if text else []:
        name, *lists = json.loads(line)
        out[name] = lists[:4]
    return out


def outgoing(text: str | None) -> Iterable[Triple]:
    """Every triple of a bucket once (from its head's outgoing lists)."""
    for name, (out_rel, out_ent, _, _) in decode_facts(text).items():
        for rel, ent in zip(out_rel, out_ent, strict=False):
            yield name, rel, ent


def _exact_line(text: str, name: str) -> list[Any] | None:
    """The decoded line of exactly ``name`` (C-speed search; only that line is decoded)."""
    needle = "[" + _dumps(name) + ","
    if text.startswith(needle):
        start = 0
    else:
        at = text.find("\n" + needle)
        if at < 0:
            return None
        start = at + 1
    end = text.find("\n", start)
    line: list[Any] = json.loads(text[start:end if end >= 0 else len(text)])
    return line


def _facts(line: list[Any]) -> Facts:
    return Facts(line[0], line[1], line[2], line[3], line[4])


def resolve_facts(text: str | None, name: str) -> Facts | None:
    """``name``'s facts in a bucket: exact, else trimmed case-insensitive (smallest match wins)."""
    if not text:
        return None
    exact = _exact_line(text, name)
    if exact is not None:
        return _facts(exact)
    folded = fold(name)
    bucket = decode_facts(text)
    matches = [stored for stored in bucket if fold(stored) == folded]
    if not matches:
        return None
    stored = min(matches)
    out_rel, out_ent, in_rel, in_ent = bucket[stored]
    return Facts(stored, out_rel, out_ent, in_rel, in_ent)


def _meta(line: list[Any]) -> dict[str, Any]:
    return line[5] if len(line) > 5 else {}


def resolve_union(text: str | None, name: str) -> Facts | None:
    """KG-R1's matching: the union of every name of the sample whose trimmed lower-case form equals
    ``name``'s (exact match included), leaving out names the sample's entity list lacks. With an exact
    match only its line and its variants' lines are decoded (found through its ``v`` list)."""
    if not text:
        return None
    exact = _exact_line(text, name)
    if exact is not None:
        lines = [exact] + [line for v in _meta(exact).get("v", ()) if (line := _exact_line(text, v))]
    else:
        folded = fold(name)
        lines = []
        for raw in text.split("\n"):
            line = json.loads(raw)
            if fold(line[0]) == folded:
                lines.append(line)
    lines = [line for line in lines if not _meta(line).get("x")]
    if not lines:
        return None
    if len(lines) == 1 and len(lines[0]) == 5:
        return _facts(lines[0])
    merged = Facts(lines[0][0], [], [], [], [])
    for line in lines:
        merged.out_rel.extend(line[1])
        merged.out_ent.extend(line[2])
        merged.in_rel.extend(line[3])
        merged.in_ent.extend(line[4])
        meta = _meta(line)
        for key, repeats in (("o", merged.repeats_out), ("i", merged.repeats_in)):
            for rel, ent, n in meta.get(key, ()):
                repeats[(rel, ent)] = max(n, repeats.get((rel, ent), 1))
    return merged


def resolve_names(store: GraphStore, wanted: dict[K, tuple[str, int, str]],
                  union: Collection[K] = (), fetched: dict[str, str] | None = None) -> dict[K, Facts | None]:
    """Facts for each ``(sample key, bucket count, name)`` of ``wanted``, fetching every bucket needed
    and not in ``fetched`` (bucket key -> text, e.g. read with the samples) in one round trip (none when
    nothing is missing); a name not in its sample resolves to None. Items in ``union`` resolve with
    KG-R1's matching (:func:`resolve_union`), the others exact-else-smallest."""
    keys = {item: facts_key(skey, facts_bucket(name, buckets))
            for item, (skey, buckets, name) in wanted.items()}
    texts: dict[str, str] = dict(fetched or {})
    missing = sorted(set(keys.values()) - texts.keys())
    if missing:
        rows = store.run("kg_facts_by_key", {"keys": missing})
        texts.update({entry["key"]: entry["facts"] or "" for row in rows for entry in row["found"]})
    return {item: (resolve_union if item in union else resolve_facts)(texts.get(key), wanted[item][2])
            for item, key in keys.items()}
