"""A single background writer so graph writes overlap with extraction and embedding."""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable

_STOP = object()


class BackgroundWriter:
    """Runs submitted callables in order on one thread; the first error stops it and is re-raised."""

    def __init__(self, depth: int = 2) -> None:
        self._queue: queue.Queue[object] = queue.Queue(maxsize=depth)
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="ingest-writer", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            if item is _STOP:
                return
            if self._error is None:
                try:
                    item()  # type: ignore[operator]
                except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
                    self._error = exc

    def raise_if_failed(self) -> None:
        if self._error is not None:
            raise self._error

    def submit(self, fn: Callable[[], None]) -> None:
        """Queue ``fn`` (blocks while ``depth`` batches wait); raises an earlier write error."""
        self.raise_if_failed()
        self._queue.put(fn)

    def close(self) -> None:
        """Wait for every queued write; raises the first write error."""
        self._queue.put(_STOP)
        self._thread.join()
        self.raise_if_failed()
