"""The LLM work of an ingest run, made affordable: cached, concurrent, and safe when the endpoint dies.

- Per chunk (phase A): typed entities (``entity_mode = llm``) and typed relations between the chunk's
  entities (LLM relations on), each looked up in the extraction cache first (``ingest/llm_cache.py``).
- Per window pair (after phase B): chunk-pair ``REL`` labels, cached the same way.
- Up to ``NEORAG_LLM_PARALLEL`` requests at once (the local server's parallel slots); progress per chunk
  (``{"stage": "llm_extraction", "current", "total", "chunk", "cached", "entities", "relations"}``).
- A chunk whose entity reply is skipped or whose endpoint fails gets the deterministic entities (counted in
  ``llm_entity_errors``): no chunk is lost. After ``Breaker.threshold`` endpoint failures in a row the
  endpoint is not called for ``cooldown_s`` (then one trial call), with one ``llm_warn`` event, so a dead
  model server costs seconds, not one timeout per chunk.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from app.core.errors import LLMUnavailable
from ingest import llm_entities, llm_entity_relations, llm_relations
from ingest.chunk import ChunkRec, text_hash
from ingest.entities import Mention, collect, extract_heuristic
from ingest.llm_cache import ExtractionCache, cache_key
from ingest.llm_entity_relations import EntityRelation
from ingest.llm_relations import PairOutcome, TypedRelation
from ingest.normalise import clean_surface, normalise

if TYPE_CHECKING:
    from app.core.config import Settings
    from app.services.container import Services
    from app.services.llm import LLMClient

T = TypeVar("T")
Progress = Callable[[dict[str, Any]], None]


def cache_path(settings: Settings) -> Path | None:
    """Where the extraction cache lives (None when disabled)."""
    if not settings.llm_cache_enabled:
        return None
    if settings.llm_cache_path is not None:
        return Path(settings.llm_cache_path).expanduser().resolve()
    return Path(settings.falkor_data_dir).resolve().parent / "llm_cache.sqlite3"


class Breaker:
    """Stops calling a failing endpoint: opens after ``threshold`` failures in a row, retries later."""

    def __init__(self, threshold: int = 3, cooldown_s: float = 15.0) -> None:
        self.threshold, self.cooldown_s = threshold, cooldown_s
        self.failures = 0
        self.opened_at: float | None = None
        self._lock = threading.Lock()

    def allow(self) -> bool:
        with self._lock:
            if self.opened_at is None:
                return True
            if time.monotonic() - self.opened_at >= self.cooldown_s:
                self.opened_at = time.monotonic()  # one trial call per pause
                return True
            return False

    def success(self) -> None:
        with self._lock:
            self.failures, self.opened_at = 0, None

    def failure(self) -> bool:
        """Count a failure; True when this one opened the breaker."""
        with self._lock:
            self.failures += 1
            if self.opened_at is None and self.failures >= self.threshold:
                self.opened_at = time.monotonic()
                return True
            return False


@dataclass
class ChunkExtraction:
    """What one chunk produced."""

    mentions: list[Mention]
    types: dict[str, str] = field(default_factory=dict)  # entity key -> configured type (LLM entities)
    relations: list[EntityRelation] = field(default_factory=list)
    cached: int = 0  # cache hits for this chunk
    entity_error: str | None = None
    relation_error: str | None = None


@dataclass
class LLMCounts:
    """Counters an ingest result reports."""

    entity_errors: int = 0
    relation_errors: int = 0
    cache_hits: int = 0
    chunks: int = 0


class LLMIngest:
    """One ingest run's LLM work (see the module docstring). ``close()`` when done."""

    def __init__(self, services: Services, llm: LLMClient, entity_mode: str, relations: bool,
                 emit: Progress) -> None:
        s = services.settings
        self.settings, self.llm, self.emit = s, llm, emit
        self.llm_entities = entity_mode == "llm"
        self.relations = relations
        self.cache = ExtractionCache(cache_path(s))
        self.breaker = Breaker()
        self.counts = LLMCounts()
        self.entity_types = tuple(s.ingest_entity_types)
        self.relation_types = tuple(s.ingest_relation_types)
        self._pool = ThreadPoolExecutor(max_workers=max(1, s.llm_parallel), thread_name_prefix="llm-ingest")
        self._warned = False

    @property
    def per_chunk(self) -> bool:
        """Whether phase A needs the LLM at all."""
        return self.llm_entities or self.relations

    def close(self) -> None:
        self._pool.shutdown(wait=True)
        self.cache.close()

    # -- calls through the breaker ------------------------------------------------------------------
    def _call(self, fn: Callable[[], T]) -> tuple[T | None, str | None]:
        if not self.breaker.allow():
            return None, "llm_unavailable: skipped while the endpoint is failing"
        try:
            value = fn()
        except LLMUnavailable as exc:
            if self.breaker.failure() and not self._warned:
                self._warned = True
                self.emit({"stage": "llm_warn", "detail": f"LLM endpoint failing ({exc.why or exc.what}); "
                           "chunks fall back to heuristic entities, retry every "
                           f"{self.breaker.cooldown_s:.0f}s"})
            return None, f"llm_error: {exc.why or exc.what}"[:300]
        self.breaker.success()
        return value, None

    def _cached(self, task: str, key: str, compute: Callable[[], Any]) -> tuple[Any, bool, str | None]:
        """(value, from_cache, error): a cached value, or a computed one stored unless the endpoint failed."""
        hit = self.cache.get(key)
        if hit is not None:
            return hit, True, None
        value, error = self._call(compute)
        if value is not None:
            self.cache.put(key, task, value)
        return value, False, error

    # -- per chunk -----------------------------------------------------------------------------------
    def _entities(self, c: ChunkRec, out: ChunkExtraction) -> list[Mention] | None:
        s = self.settings
        key = cache_key("entities", llm_entities.PROMPT_VERSION, self.llm.model, c.hash, self.entity_types,
                        s.ingest_entity_max_per_chunk)

        def compute() -> dict[str, Any]:
            res = llm_entities.extract_llm(self.llm, c.text, self.entity_types,
                                           min(s.ingest_entity_max_per_chunk, llm_entities.MAX_ITEMS))
            return {"skipped": res.error} if res.entities is None else {"entities": res.entities}

        value, cached, error = self._cached("entities", key, compute)
        out.cached += int(cached)
        if value is None or "skipped" in value:
            out.entity_error = error if value is None else str(value["skipped"])
            return None
        typed = [(str(n), str(t)) for n, t in value["entities"]]
        mentions = collect([n for n, _ in typed], s.ingest_entity_min_len, s.ingest_entity_max_per_chunk)
        kept = {m.key for m in mentions}
        keys = {n: normalise(clean_surface(n)) for n, _ in typed}
        out.types = {keys[n]: t for n, t in typed if keys[n] in kept}
        return mentions

    def _relations(self, c: ChunkRec, mentions: list[Mention], out: ChunkExtraction) -> None:
        names = tuple(m.name for m in mentions)[: llm_entity_relations.MAX_ENTITIES]
        if len(names) < 2:
            return
        by_name = {m.name: m.key for m in mentions}
        key = cache_key("entity_relations", llm_entity_relations.PROMPT_VERSION, self.llm.model, c.hash,
                        names, self.relation_types, self.settings.ingest_llm_max_relations)

        def compute() -> dict[str, Any]:
            res = llm_entity_relations.extract_relations(self.llm, c.text, names, self.relation_types,
                                                         self.settings.ingest_llm_max_relations)
            return {"skipped": res.error} if res.triples is None else {"relations": res.triples}

        value, cached, error = self._cached("entity_relations", key, compute)
        out.cached += int(cached)
        if value is None or "skipped" in value:
            out.relation_error = error if value is None else str(value["skipped"])
            return
        allowed = set(self.relation_types)
        for src, rel_type, dst in value["relations"]:
            if src in by_name and dst in by_name and rel_type in allowed and by_name[src] != by_name[dst]:
                out.relations.append(EntityRelation(by_name[src], by_name[dst], rel_type, c.id))

    def _chunk(self, c: ChunkRec) -> ChunkExtraction:
        s = self.settings
        out = ChunkExtraction(mentions=[])
        mentions = self._entities(c, out) if self.llm_entities else None
        if mentions is None:
            mentions = extract_heuristic(c.text, s.ingest_entity_min_len, s.ingest_entity_max_per_chunk)
        out.mentions = mentions
        if self.relations:
            self._relations(c, mentions, out)
        return out

    def extract(self, chunks: list[ChunkRec], total: int) -> dict[str, ChunkExtraction]:
        """Every chunk's extraction, ``llm_parallel`` at a time; one progress event per chunk."""
        futures: dict[Future[ChunkExtraction], ChunkRec] = {
            self._pool.submit(self._chunk, c): c for c in chunks}
        out: dict[str, ChunkExtraction] = {}
        for fut in as_completed(futures):
            c, res = futures[fut], fut.result()
            out[c.id] = res
            self.counts.chunks += 1
            self.counts.cache_hits += res.cached
            self.counts.entity_errors += int(res.entity_error is not None)
            self.counts.relation_errors += int(res.relation_error is not None)
            event: dict[str, Any] = {"stage": "llm_extraction", "current": self.counts.chunks, "total": total,
                                     "chunk": c.id, "cached": res.cached > 0, "entities": len(res.mentions),
                                     "relations": len(res.relations)}
            if res.entity_error or res.relation_error:
                event["error"] = res.entity_error or res.relation_error
            self.emit(event)
        return out

    # -- chunk pairs ---------------------------------------------------------------------------------
    def _pair(self, a: str, ta: str, b: str, tb: str, truncate: int,
              temperature: float | None) -> PairOutcome:
        key = cache_key("chunk_pairs", llm_relations.PROMPT_VERSION, self.llm.model,
                        text_hash(ta[:truncate]), text_hash(tb[:truncate]), temperature)

        def compute() -> dict[str, Any]:
            res = llm_relations.label_pair(self.llm, "A", ta, "B", tb, truncate, temperature)
            if res.error and res.error.startswith("llm_error"):
                raise LLMUnavailable("the LLM endpoint failed", res.error)
            if res.error:
                return {"skipped": res.error}
            return {"relations": [[r.type, "A->B" if r.src == "A" else "B->A", r.confidence]
                                  for r in res.relations], "dropped": res.dropped}

        value, cached, error = self._cached("chunk_pairs", key, compute)
        self.counts.cache_hits += int(cached)
        if value is None:
            return PairOutcome(error=error)
        if "skipped" in value:
            return PairOutcome(error=str(value["skipped"]))
        rels = [TypedRelation(b, a, t, float(conf)) if d == "B->A" else TypedRelation(a, b, t, float(conf))
                for t, d, conf in value["relations"]]
        return PairOutcome(rels, None, int(value.get("dropped", 0)))

    def label_pairs(self, work: list[tuple[str, str, str, str]], truncate: int,
                    temperature: float | None) -> Iterator[tuple[str, str, PairOutcome]]:
        """(a, b, outcome) for every pair, in input order, labelled ``llm_parallel`` at a time."""
        futures = [self._pool.submit(self._pair, a, ta, b, tb, truncate, temperature)
                   for a, ta, b, tb in work]
        for (a, _, b, _), fut in zip(work, futures, strict=True):
            yield a, b, fut.result()
