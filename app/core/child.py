"""Child processes that die with their parent, and a supervisor that restarts one when it dies.

Generic (no store knowledge): the embedded FalkorDB uses it (app/store/embedded.py); any other child
server (e.g. a local LLM server) can use it the same way.

``PR_SET_PDEATHSIG`` is tied to the *thread* that forked the child: the child gets SIGKILL when that
thread ends. :class:`Supervisor` therefore starts (and restarts) its child on its own thread, which lives
until :meth:`Supervisor.close`, so the child dies exactly when the supervisor or the whole process does
(``kill -9`` of the parent included).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import os
import signal
import threading
import time
from collections.abc import Callable
from typing import Generic, TypeVar

log = logging.getLogger(__name__)

PR_SET_PDEATHSIG = 1
_LIBC = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
_prctl = _LIBC.prctl  # looked up now: nothing is resolved between fork and exec

T = TypeVar("T")


def die_with_parent() -> Callable[[], None]:
    """A ``preexec_fn`` that makes the child get SIGKILL when the forking thread (or process) ends.

    If the parent already died between fork and prctl, the child exits at once instead of running
    orphaned."""
    parent = os.getpid()

    def preexec() -> None:
        _prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:
            os._exit(1)

    return preexec


class Supervisor(Generic[T]):
    """Keeps one child running: ``start()`` makes it, ``alive(child)`` checks it every ``interval_s``,
    a dead one is started again (back-off up to ``max_backoff_s`` while starts fail)."""

    def __init__(self, name: str, start: Callable[[], T], alive: Callable[[T], bool],
                 interval_s: float = 0.5, max_backoff_s: float = 5.0) -> None:
        self.name = name
        self._start, self._alive = start, alive
        self.interval_s, self.max_backoff_s = interval_s, max_backoff_s
        self.child: T | None = None
        self.restarts = 0
        self.last_error: str | None = None
        self.state = "starting"  # running | restarting | stopped
        self._stop = threading.Event()
        self._closing = False  # set first by close(): no restart while the child is being stopped
        self._first = threading.Event()
        self._first_error: BaseException | None = None
        self._thread: threading.Thread | None = None

    def run(self, timeout_s: float | None = None) -> T:
        """Start the supervising thread; return the first child, or raise what its start raised."""
        self._thread = threading.Thread(target=self._loop, name=f"supervise:{self.name}", daemon=True)
        self._thread.start()
        if not self._first.wait(timeout_s):
            self.close()
            raise TimeoutError(f"{self.name} did not start within {timeout_s} s")
        if self._first_error is not None:
            raise self._first_error
        assert self.child is not None
        return self.child

    def _loop(self) -> None:
        try:
            self.child = self._start()
        except BaseException as exc:  # noqa: BLE001 - handed to run()
            self._first_error = exc
            self.state = "stopped"
            self._first.set()
            return
        self.state = "running"
        self._first.set()
        backoff = self.interval_s
        while not self._stop.wait(self.interval_s if self.state == "running" else backoff):
            if self._closing or (self.state == "running" and self._alive(self.child)):
                continue
            if self.state == "running":
                log.warning("%s died; restarting it", self.name)
                self.state = "restarting"
            try:
                self.child = self._start()
            except Exception as exc:  # noqa: BLE001 - retried with back-off
                self.last_error = f"{type(exc).__name__}: {exc}"
                log.error("restarting %s failed: %s", self.name, self.last_error)
                backoff = min(self.max_backoff_s, backoff * 2)
                continue
            self.restarts += 1
            self.state, backoff = "running", self.interval_s
            log.warning("%s restarted (restart %d)", self.name, self.restarts)

    def close(self, stop_child: Callable[[T], object] | None = None) -> None:
        """Stop supervising; ``stop_child`` (if given) stops the child gracefully first, while the
        supervising thread still lives (it ends afterwards, and with it any child still tied to it)."""
        self._closing = True
        if stop_child is not None and self.child is not None:
            stop_child(self.child)
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=10)
        self.state = "stopped"

    def wait_running(self, timeout_s: float) -> bool:
        """Wait until the child runs (after a restart); whether it does."""
        deadline = time.monotonic() + timeout_s
        while self.state != "running" and time.monotonic() < deadline:
            time.sleep(0.05)
        return self.state == "running"
