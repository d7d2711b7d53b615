"""Read cache for KG actions: the graph stays the source of truth.

What is cached: sample facts (existence, relation set, bucket count) and the resolved per-sample
entity facts (one entity's entry of a ``KGFacts`` bucket), keyed by (sample key, requested entity
string), including negative answers.
Correctness: a batch first reads the generation token of each dataset it touches (one tiny query),
unless every one was read less than ``NEORAG_KG_GENERATION_CHECK_MS`` ago (0: every batch); a load or
replace in ANY process writes a new token, and a changed token drops the whole cache before the batch
runs, so a load is seen at most that long after it finished. Memory is bounded: facts are evicted
least-recently-used once their total weight (sum of triples held, ``NEORAG_KG_CACHE_MAX_TRIPLES``)
exceeds the bound; sample entries are cleared when more than ``max_samples`` are held. A bound of 0
disables caching: each batch then starts from an empty cache (same round trips, nothing kept).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass

from app.kg.facts import Facts


@dataclass
class SampleInfo:
    """A loaded sample as the actions need it."""

    key: str
    n_triples: int
    relations: frozenset[str]
    buckets: int = 1  # KGFacts buckets the sample is split into (app.kg.facts)


FactsKey = tuple[str, ...]  # (sample key, requested entity) or (sample key, entity, UNION)
UNION = "union"  # KG-R1 matching: every case variant of the name in the sample


def _weight(facts: Facts | None) -> int:
    return facts.weight if facts is not None else 1


class KGCache:
    """Bounded, generation-checked cache (thread-safe through ``lock``: hold it while reading or writing
    it, never across a store round trip; see :meth:`view` and :meth:`absorb`)."""

    def __init__(self, max_triples: int, max_samples: int = 200_000, check_ms: float = 0.0) -> None:
        self.max_triples = max_triples
        self.max_samples = max_samples
        self.check_s = check_ms / 1000.0  # generation tokens read at most this often (0: every batch)
        self.lock = threading.Lock()
        self.generations: dict[str, str | None] = {}
        self.checked: dict[str, float] = {}  # dataset -> time.monotonic() of its last generation read
        self.samples: dict[str, SampleInfo | None] = {}
        self.facts: OrderedDict[FactsKey, Facts | None] = OrderedDict()
        self.vocab: dict[str, frozenset[str]] = {}  # dataset -> its relation vocabulary (KG-R1 chat answers)
        self.weight = 0
        self.known: tuple[set[str], set[FactsKey]] = (set(), set())  # a view's entries taken from the cache
        self.hits = 0
        self.misses = 0
        self.invalidations = 0

    @property
    def enabled(self) -> bool:
        return self.max_triples > 0

    def clear(self) -> None:
        self.generations.clear()
        self.checked.clear()
        self.samples.clear()
        self.facts.clear()
        self.vocab.clear()
        self.weight = 0

    def fresh(self, datasets: list[str], now: float) -> bool:
        """Whether every dataset's generation token was read less than ``check_ms`` ago."""
        return all(now - self.checked.get(d, -1e18) < self.check_s for d in datasets)

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

    def get_facts(self, key: FactsKey) -> tuple[bool, Facts | None]:
        """(found, facts): found is False when the pair was never looked up."""
        try:
            value = self.facts[key]
        except KeyError:
            self.misses += 1
            return False, None
        self.facts.move_to_end(key)
        self.hits += 1
        return True, value

    def put_facts(self, key: FactsKey, facts: Facts | None) -> None:
        if key in self.facts:
            self.weight -= _weight(self.facts.pop(key))
        self.facts[key] = facts
        self.weight += _weight(facts)
        if self.enabled:
            while self.weight > self.max_triples and len(self.facts) > 1:
                _, evicted = self.facts.popitem(last=False)
                self.weight -= _weight(evicted)

    def view(self, pairs: list[tuple[str, str]], union: bool = False) -> KGCache:
        """A batch's private cache: the entries of ``pairs`` (sample key, entity) this cache holds (caller
        holds the lock); the batch fetches the rest into it without the lock, then :meth:`absorb`."""
        local = KGCache(0)
        local.generations = dict(self.generations)
        for skey, entity in pairs:
            if skey in self.samples and skey not in local.samples:
                local.samples[skey] = self.samples[skey]
            key: FactsKey = (skey, entity, UNION) if union else (skey, entity)
            if key not in local.facts:
                found, facts = self.get_facts(key)
                if found:
                    local.facts[key] = facts
        local.known = set(local.samples), set(local.facts)
        return local

    def absorb(self, local: KGCache) -> None:
        """Add what a :meth:`view` fetched (caller holds the lock); nothing when a dataset's generation
        changed meanwhile (a load landed: what was fetched may predate it)."""
        if any(self.generations.get(name) != gen for name, gen in local.generations.items()):
            return
        samples, facts = local.known
        for key, info in local.samples.items():
            if key not in samples:
                self.put_sample(key, info)
        for fkey, value in local.facts.items():
            if fkey not in facts:
                self.put_facts(fkey, value)

    def stats(self) -> dict[str, int]:
        return {"facts": len(self.facts), "samples": len(self.samples), "triples": self.weight,
                "max_triples": self.max_triples, "hits": self.hits, "misses": self.misses,
                "invalidations": self.invalidations}
