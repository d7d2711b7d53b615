"""Read cache for KG actions: the graph stays the source of truth.

What is cached: sample facts (existence, relation set) and the resolved per-sample entity facts
(``KGFacts`` rows), keyed by (sample key, requested entity string), including negative answers.
Correctness: every batch first reads the generation token of each dataset it touches (one tiny
query); a load or replace in ANY process writes a new token, and a changed token drops the whole
cache before the batch runs. Memory is bounded: facts are evicted least-recently-used once their
total weight (sum of triples held, ``NEORAG_KG_CACHE_MAX_TRIPLES``) exceeds the bound; sample
entries are cleared when more than ``max_samples`` are held. A bound of 0 disables caching: each
batch then starts from an empty cache (same round trips, nothing kept).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass, field


@dataclass
class SampleInfo:
    """A loaded sample as the actions need it."""

    key: str
    n_triples: int
    relations: frozenset[str]


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


def _weight(facts: Facts | None) -> int:
    return facts.weight if facts is not None else 1


class KGCache:
    """Bounded, generation-checked cache (thread-safe through ``lock``; hold it for a whole batch)."""

    def __init__(self, max_triples: int, max_samples: int = 200_000) -> None:
        self.max_triples = max_triples
        self.max_samples = max_samples
        self.lock = threading.Lock()
        self.generations: dict[str, str | None] = {}
        self.samples: dict[str, SampleInfo | None] = {}
        self.facts: OrderedDict[tuple[str, str], Facts | None] = OrderedDict()
        self.weight = 0
        self.hits = 0
        self.misses = 0
        self.invalidations = 0

    @property
    def enabled(self) -> bool:
        return self.max_triples > 0

    def clear(self) -> None:
        self.generations.clear()
        self.samples.clear()
        self.facts.clear()
        self.weight = 0

    def observe_generations(self, current: dict[str, str | None]) -> None:
        """Drop everything when a dataset's generation token differs from the one cached."""
        changed = any(self.generations.get(name, "\0unseen") != gen for name, gen in current.items()
                      if name in self.generations)
        if changed:
            self.invalidations += 1
            self.clear()
        self.generations.update(current)

    def put_sample(self, key: str, info: SampleInfo | None) -> None:
        if len(self.samples) >= self.max_samples:
            self.samples.clear()
        self.samples[key] = info

    def get_facts(self, key: tuple[str, str]) -> tuple[bool, Facts | None]:
        """(found, facts): found is False when the pair was never looked up."""
        try:
            value = self.facts[key]
        except KeyError:
            self.misses += 1
            return False, None
        self.facts.move_to_end(key)
        self.hits += 1
        return True, value

    def put_facts(self, key: tuple[str, str], facts: Facts | None) -> None:
        if key in self.facts:
            self.weight -= _weight(self.facts.pop(key))
        self.facts[key] = facts
        self.weight += _weight(facts)
        if self.enabled:
            while self.weight > self.max_triples and len(self.facts) > 1:
                _, evicted = self.facts.popitem(last=False)
                self.weight -= _weight(evicted)

    def stats(self) -> dict[str, int]:
        return {"facts": len(self.facts), "samples": len(self.samples), "triples": self.weight,
                "max_triples": self.max_triples, "hits": self.hits, "misses": self.misses,
                "invalidations": self.invalidations}
