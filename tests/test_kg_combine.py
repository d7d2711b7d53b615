"""Concurrent cold KG reads share one round trip (app.kg.combine), on a scripted store whose first read
blocks until the test lets it go, so the reads that queue behind it are known exactly."""

from __future__ import annotations

import threading
import time
from typing import Any, cast

from app.core.errors import StoreUnavailable
from app.kg.combine import CombiningStore, combining
from app.store.base import GraphStore


class GatedStore:
    """Answers ``kg_facts_by_key`` / ``kg_sample_lookup_with_facts`` from a dict; its first read waits."""

    def __init__(self, fail: bool = False) -> None:
        self.calls: list[tuple[str, dict[str, Any] | None]] = []
        self.entered = threading.Event()
        self.release = threading.Event()
        self.fail = fail

    def run(self, name: str, params: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        self.calls.append((name, params))
        if len(self.calls) == 1:
            self.entered.set()
            assert self.release.wait(10)
        if self.fail:
            raise StoreUnavailable("store away", "gone", "start it")
        if name == "kg_facts_by_key":
            return [{"found": [{"key": k, "facts": f"text of {k}"} for k in (params or {})["keys"]
                               if k != "missing"]}]
        if name == "kg_sample_lookup_with_facts":
            return [{"samples": [{"key": x["s"], "found": [[h, f"bucket {h}"] for h in x["h"]]}
                                 for x in (params or {})["samples"]]}]
        return [{"name": name}]


def _start(reads: GraphStore | CombiningStore, name: str, params: dict[str, Any], out: dict[int, Any],
           i: int) -> threading.Thread:
    def go() -> None:
        try:
            out[i] = reads.run(name, params)
        except Exception as exc:  # noqa: BLE001 - the test looks at it
            out[i] = exc

    thread = threading.Thread(target=go)
    thread.start()
    return thread


def _wait_queued(reads: CombiningStore, name: str, n: int) -> None:
    deadline = time.monotonic() + 10
    while reads.lanes[name].reads < n:
        assert time.monotonic() < deadline
        time.sleep(0.005)


def test_reads_queued_behind_one_in_flight_go_out_as_one_statement() -> None:
    store = GatedStore()
    reads = CombiningStore(cast(GraphStore, store))
    out: dict[int, Any] = {}
    first = _start(reads, "kg_facts_by_key", {"keys": ["a"]}, out, 0)
    assert store.entered.wait(10)
    rest = [_start(reads, "kg_facts_by_key", {"keys": keys}, out, i)
            for i, keys in enumerate((["b", "c"], ["c", "missing"], ["d"]), start=1)]
    _wait_queued(reads, "kg_facts_by_key", 4)
    store.release.set()
    for thread in [first, *rest]:
        thread.join(10)
    assert [params for _, params in store.calls] == [{"keys": ["a"]}, {"keys": ["b", "c", "d", "missing"]}]
    assert out[0] == [{"found": [{"key": "a", "facts": "text of a"}]}]
    assert out[1] == [{"found": [{"key": "b", "facts": "text of b"}, {"key": "c", "facts": "text of c"}]}]
    assert out[2] == [{"found": [{"key": "c", "facts": "text of c"}]}]  # its missing key: no entry, as alone
    assert out[3] == [{"found": [{"key": "d", "facts": "text of d"}]}]
    assert reads.stats()["kg_facts_by_key"] == {"reads": 4, "round_trips": 2}


def test_sample_reads_merge_their_bucket_hashes() -> None:
    store = GatedStore()
    reads = CombiningStore(cast(GraphStore, store))
    out: dict[int, Any] = {}
    first = _start(reads, "kg_sample_lookup_with_facts", {"samples": [{"s": "x", "h": []}]}, out, 0)
    assert store.entered.wait(10)
    second = _start(reads, "kg_sample_lookup_with_facts", {"samples": [{"s": "y", "h": [3]}]}, out, 1)
    both = {"samples": [{"s": "y", "h": [1]}, {"s": "z", "h": []}]}
    third = _start(reads, "kg_sample_lookup_with_facts", both, out, 2)
    _wait_queued(reads, "kg_sample_lookup_with_facts", 3)
    store.release.set()
    for thread in (first, second, third):
        thread.join(10)
    assert store.calls[1][1] == {"samples": [{"s": "y", "h": [1, 3]}, {"s": "z", "h": []}]}
    assert out[1] == [{"samples": [{"key": "y", "found": [[1, "bucket 1"], [3, "bucket 3"]]}]}]
    assert [sample["key"] for sample in out[2][0]["samples"]] == ["y", "z"]


def test_a_failed_shared_statement_fails_every_read_in_it() -> None:
    store = GatedStore(fail=True)
    reads = CombiningStore(cast(GraphStore, store))
    out: dict[int, Any] = {}
    first = _start(reads, "kg_facts_by_key", {"keys": ["a"]}, out, 0)
    assert store.entered.wait(10)
    second = _start(reads, "kg_facts_by_key", {"keys": ["b"]}, out, 1)
    _wait_queued(reads, "kg_facts_by_key", 2)
    store.release.set()
    first.join(10)
    second.join(10)
    assert all(isinstance(out[i], StoreUnavailable) for i in (0, 1))
    store.fail = False  # the lane is free again afterwards
    assert reads.run("kg_facts_by_key", {"keys": ["c"]}) == [{"found": [{"key": "c", "facts": "text of c"}]}]


def test_a_lone_read_and_other_statements_go_straight_through() -> None:
    store = GatedStore()
    store.release.set()
    reads = combining(cast(GraphStore, store))
    assert reads.run("kg_facts_by_key", {"keys": ["q"]}) == [{"found": [{"key": "q", "facts": "text of q"}]}]
    assert reads.run("kg_dataset_generations", {"names": ["d"]}) == [{"name": "kg_dataset_generations"}]
    assert store.calls == [("kg_facts_by_key", {"keys": ["q"]}), ("kg_dataset_generations", {"names": ["d"]})]
    assert combining(cast(GraphStore, store)) is reads  # one wrapper per store


def test_many_threads_each_get_their_own_rows() -> None:
    threads = 8
    store = GatedStore()
    store.release.set()
    reads = CombiningStore(cast(GraphStore, store))
    out: dict[int, Any] = {}
    workers = [_start(reads, "kg_facts_by_key", {"keys": [f"k{i}", f"k{i}b"]}, out, i)
               for i in range(threads)]
    for thread in workers:
        thread.join(10)
    for i in range(threads):
        assert [entry["key"] for entry in out[i][0]["found"]] == [f"k{i}", f"k{i}b"]
    stats = reads.stats()["kg_facts_by_key"]
    assert stats["reads"] == threads and 1 <= stats["round_trips"] <= threads
