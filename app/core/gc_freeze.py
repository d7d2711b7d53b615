"""Keeps Python's cyclic garbage collector off what a long load has already built.

A KG load keeps structures that grow with the graph (the entity names and edge hashes it has written; the
bulk CSV pass's whole-graph triple counts) and allocates many short-lived containers per chunk. The
collector then runs a full pass every chunk or two, and a full pass walks every live container, so each
chunk costs more than the one before: at 3M triples these passes took about half of the online loader's
time (docs/BENCHMARKS.md, "Fourth session: embedded online load at 3M").

:func:`frozen_heap` moves everything alive when it starts, and at each :meth:`Freezer.step` (a chunk
boundary), into the collector's permanent generation (``gc.freeze()``, a list splice), which no pass walks;
objects made after the last step are collected as usual. Acyclic garbage is freed by reference counting
whatever its generation; a cycle that dies after a step waits for the end of the load. Loads that overlap
(threads of one process) share the freeze: the last one to finish hands everything back (``gc.unfreeze()``).
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_active = 0  # frozen_heap() blocks running now, in any thread


class Freezer:
    """Handed out by :func:`frozen_heap`."""

    def step(self) -> None:
        """Freeze what is alive now too (call between chunks: what the load keeps is never walked again)."""
        gc.freeze()


@contextmanager
def frozen_heap() -> Iterator[Freezer]:
    """Freeze the heap for the duration of a load (see the module docstring); nests and overlaps."""
    global _active
    with _lock:
        _active += 1
        gc.freeze()
    try:
        yield Freezer()
    finally:
        with _lock:
            _active -= 1
            if _active == 0:
                gc.unfreeze()
