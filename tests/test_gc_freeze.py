"""app.core.gc_freeze: a load's structures are kept out of the collector's passes while it runs, the heap is
handed back when the last overlapping load ends (failures included), and the bulk CSV pass uses it."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.core.gc_freeze import frozen_heap
from ingest.kg.bulk import BulkWriter
from ingest.kg.records import KGRecord


def walked(obj: object) -> bool:
    """Whether the collector's passes walk ``obj`` (it is in one of its generations, not frozen)."""
    return any(o is obj for o in gc.get_objects())


def test_what_exists_at_the_start_and_at_each_step_is_not_walked_until_the_end() -> None:
    before = gc.get_freeze_count()
    kept: set[int] = set()
    with frozen_heap() as heap:
        assert not walked(kept)
        later: list[object] = [object()]
        assert walked(later)
        heap.step()
        assert not walked(later)
    assert walked(kept) and walked(later) and gc.get_freeze_count() == before


def test_overlapping_loads_share_the_freeze_and_a_failure_hands_the_heap_back() -> None:
    before = gc.get_freeze_count()
    inner_done, outer_may_end = threading.Event(), threading.Event()
    kept: list[object] = []

    def other_load() -> None:  # starts inside the outer block, ends before it
        with frozen_heap():
            kept.append(object())
        inner_done.set()
        outer_may_end.wait(10)

    with frozen_heap() as heap:
        heap.step()
        thread = threading.Thread(target=other_load)
        thread.start()
        assert inner_done.wait(10)
        assert gc.get_freeze_count() > 0 and not walked(kept)  # the other load's end unfroze nothing
        outer_may_end.set()
    thread.join(10)
    assert gc.get_freeze_count() == before and walked(kept)
    with pytest.raises(RuntimeError), frozen_heap():
        raise RuntimeError("a load fails")
    assert gc.get_freeze_count() == before


def test_the_bulk_csv_pass_runs_with_the_heap_frozen_and_hands_it_back(tmp_path: Path) -> None:
    frozen_at_record: list[int] = []

    def records() -> Iterator[KGRecord]:
        for i in range(3):
            frozen_at_record.append(gc.get_freeze_count())
            yield KGRecord(f"s{i}", [(f"e{i}", "r", f"e{i + 1}")])

    before = gc.get_freeze_count()
    report = BulkWriter(tmp_path, "d").write_all(records())
    assert report.samples_loaded == 3 and report.distinct_triples == 3
    assert all(n > before for n in frozen_at_record) and gc.get_freeze_count() == before
