"""Concurrent cold KG reads share one store round trip (flat combining).

KG-R1 training loops send many small ``/retrieve`` batches at once. Each cold batch reads its fact
buckets (``kg_facts_by_key``) or samples (``kg_sample_lookup_with_facts``) with one statement, and on a
server store most of such a read's cost is per statement (Neo4j: Bolt, the transaction, the driver), not
per key. :func:`combining` wraps a store so that a read of those statements issued while another one is
in flight waits for it, then goes out together with every other read that queued meanwhile: one
statement with the union of their keys, each caller getting back the entries of its own keys. A lone read
goes out at once, as before; any other statement passes straight through. A failure of the shared
statement reaches every caller in it. Both statements answer one row holding a list (``found`` /
``samples``) whose entries carry their ``key``; each caller gets one such row with its own entries.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, cast

from app.store.base import GraphStore, Row


def _merge_keys(items: list[Any]) -> list[Any]:
    return sorted(set(items))


def _merge_samples(items: list[Any]) -> list[Any]:
    hashes: dict[str, set[int]] = {}
    for item in items:
        hashes.setdefault(item["s"], set()).update(item["h"])
    return [{"s": s, "h": sorted(h)} for s, h in sorted(hashes.items())]


@dataclass(frozen=True)
class Combinable:
    """How one keyed statement is combined: its list parameter, an item's key, merging items, and the
    list column of its one result row, whose entries each carry the ``key`` of one item."""

    param: str
    item_key: Callable[[Any], str]
    merge: Callable[[list[Any]], list[Any]]
    column: str


COMBINABLE: dict[str, Combinable] = {
    "kg_facts_by_key": Combinable("keys", lambda key: key, _merge_keys, "found"),
    "kg_sample_lookup_with_facts": Combinable("samples", lambda item: item["s"], _merge_samples, "samples"),
}


@dataclass
class _Read:
    items: list[Any]
    done: threading.Event = field(default_factory=threading.Event)
    lead: bool = False  # sends the next statement (first in an idle lane, or handed it by the one before)
    rows: list[Row] | None = None
    error: BaseException | None = None


class _Lane:
    """The reads of one statement: at most one in flight, the others queued for the next."""

    def __init__(self, name: str, spec: Combinable) -> None:
        self.name, self.spec = name, spec
        self.lock = threading.Lock()
        self.queued: list[_Read] = []
        self.busy = False
        self.round_trips = 0
        self.reads = 0

    def read(self, store: GraphStore, items: list[Any]) -> list[Row]:
        mine = _Read(items)
        with self.lock:
            self.reads += 1
            self.queued.append(mine)
            mine.lead = not self.busy  # nothing in flight: this read sends the statement itself
            self.busy = True
        if not mine.lead:
            mine.done.wait()  # served by another read's statement, or handed the next one
        if mine.lead:
            self._round_trip(store)
        if mine.error is not None:
            raise mine.error
        return mine.rows or []

    def _round_trip(self, store: GraphStore) -> None:
        """Send every queued read as one statement, hand each its rows, pass the lane on."""
        with self.lock:
            batch, self.queued = self.queued, []
            self.round_trips += 1
        try:
            merged = self.spec.merge([item for read in batch for item in read.items])
            rows = store.run(self.name, {self.spec.param: merged})
            column = self.spec.column
            by_key: dict[str, list[Any]] = {}
            for entry in (entry for row in rows for entry in row[column]):
                by_key.setdefault(entry["key"], []).append(entry)
            for read in batch:
                keys = dict.fromkeys(self.spec.item_key(item) for item in read.items)
                read.rows = [{column: [entry for key in keys for entry in by_key.get(key, ())]}]
        except BaseException as exc:  # noqa: BLE001 - every caller of the shared statement gets it
            for read in batch:
                read.error = exc
        with self.lock:
            if self.queued:  # reads that arrived meanwhile: the first of them sends the next statement
                nxt = self.queued[0]
                nxt.lead = True
                nxt.done.set()
            else:
                self.busy = False
        for read in batch:
            read.lead = False
            read.done.set()


class CombiningStore:
    """A store whose :data:`COMBINABLE` reads are combined across threads (see the module)."""

    def __init__(self, store: GraphStore) -> None:
        self.store = store
        self.lanes = {name: _Lane(name, spec) for name, spec in COMBINABLE.items()}

    def run(self, name: str, params: dict[str, Any] | None = None) -> list[Row]:
        lane = self.lanes.get(name)
        if lane is None or params is None:
            return self.store.run(name, params)
        return lane.read(self.store, list(params[lane.spec.param]))

    def stats(self) -> dict[str, dict[str, int]]:
        """Reads asked and round trips made, per statement."""
        return {name: {"reads": lane.reads, "round_trips": lane.round_trips}
                for name, lane in self.lanes.items()}


_COMBINERS: weakref.WeakKeyDictionary[GraphStore, CombiningStore] = weakref.WeakKeyDictionary()
_REGISTRY_LOCK = threading.Lock()


def combining(store: GraphStore) -> GraphStore:
    """``store`` with its concurrent cold KG reads combined (one wrapper per store, shared by threads)."""
    with _REGISTRY_LOCK:
        wrapper = _COMBINERS.get(store)
        if wrapper is None:
            wrapper = _COMBINERS[store] = CombiningStore(store)
    return cast(GraphStore, wrapper)
