"""Child processes that die with their parent, and one supervisor that restarts a child when it dies.

Generic (no store or model knowledge): both child servers of NeoRAG run under :class:`Supervisor`, the
embedded FalkorDB (app/store/embedded.py, app/services/container.py) and the local LLM server
(app/services/local_llm.py). One class holds what both need: restart with exponential back-off while
starts fail, an optional give-up after ``max_restarts`` restarts within ``restart_window_s`` (state
``failed``), an ``on_restart`` hook (the local LLM tells its clients a new port), and what the operator
sees in /diagnostics (:meth:`Supervisor.report`: state, restarts, last error).

``PR_SET_PDEATHSIG`` is tied to the *thread* that forked the child: the child gets SIGKILL when that
thread ends. :class:`Supervisor` therefore starts (and restarts) its child on its own thread, which lives
until :meth:`Supervisor.close`, so a child started with :func:`die_with_parent` as ``preexec_fn`` dies
exactly when the supervisor or the whole process does (``kill -9`` of the parent included).
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
from typing import Any, Generic, TypeVar

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
    a dead one is started again (back-off up to ``max_backoff_s`` while starts fail).

    ``max_restarts``: give up (state ``failed``, ``last_error`` says so) when the child needs a restart
    after that many restart attempts within ``restart_window_s``; None restarts for ever.
    ``on_restart(child)`` runs on the supervising thread after each successful restart.
    ``state``: starting | running | restarting | failed | stopped."""

    def __init__(self, name: str, start: Callable[[], T], alive: Callable[[T], bool],
                 interval_s: float = 0.5, max_backoff_s: float = 5.0, max_restarts: int | None = None,
                 restart_window_s: float = 300.0, on_restart: Callable[[T], object] | None = None) -> None:
        self.name = name
        self._start, self._alive, self._on_restart = start, alive, on_restart
        self.interval_s, self.max_backoff_s = interval_s, max_backoff_s
        self.max_restarts, self.restart_window_s = max_restarts, restart_window_s
        self.child: T | None = None
        self.restarts = 0
        self.last_error: str | None = None
        self.state = "starting"
        self._attempts: list[float] = []  # when restarts were tried (monotonic), for the give-up window
        self._stop = threading.Event()
        self._closing = False  # set first by close(): no restart while the child is being stopped
        self._handoff = threading.Lock()  # a new child is either adopted or, once closing, stopped here
        self._stop_child: Callable[[T], object] | None = None
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

    def report(self) -> dict[str, Any]:
        """What the operator sees: ``state``, ``restarts``, ``last_error``."""
        return {"state": self.state, "restarts": self.restarts, "last_error": self.last_error}

    def _loop(self) -> None:
        try:
            child = self._start()
        except BaseException as exc:  # noqa: BLE001 - handed to run()
            self._first_error = exc
            self.state = "stopped"
            self._first.set()
            return
        if not self._adopt(child):
            self._first_error = RuntimeError(f"{self.name} was closed while it started")
            self._first.set()
            return
        self.state = "running"
        self._first.set()
        backoff = self.interval_s
        while not self._stop.wait(self.interval_s if self.state == "running" else backoff):
            if self._closing or (self.state == "running" and self._alive(child)):
                continue
            if self.state == "running":
                log.warning("%s died; restarting it", self.name)
                self.state = "restarting"
            if self._give_up():
                return
            try:
                child = self._start()
            except Exception as exc:  # noqa: BLE001 - retried with back-off
                self.last_error = f"{type(exc).__name__}: {exc}"
                log.error("restarting %s failed: %s", self.name, self.last_error)
                backoff = min(self.max_backoff_s, backoff * 2)
                continue
            if not self._adopt(child):
                return
            self.restarts += 1
            self.state, backoff = "running", self.interval_s
            log.warning("%s restarted (restart %d)", self.name, self.restarts)
            if self._on_restart is not None:
                try:
                    self._on_restart(child)
                except Exception:  # noqa: BLE001 - a hook never stops the supervision
                    log.exception("%s: the on-restart hook failed", self.name)

    def _adopt(self, child: T) -> bool:
        """Make ``child`` the supervised one; if close() began while it started, stop it here instead
        (``close``'s ``stop_child``; without one it dies with this thread, which ends now)."""
        with self._handoff:
            closing = self._closing
            if not closing:
                self.child = child
        if closing and self._stop_child is not None:
            self._stop_child(child)
        return not closing

    def _give_up(self) -> bool:
        """Whether the restart limit is reached (then state ``failed``); otherwise count this attempt."""
        if self.max_restarts is None:
            return False
        now = time.monotonic()
        self._attempts = [t for t in self._attempts if now - t < self.restart_window_s]
        if len(self._attempts) < self.max_restarts:
            self._attempts.append(now)
            return False
        last = f" (last error: {self.last_error})" if self.last_error else ""
        self.last_error = (f"gave up after {self.max_restarts} restart attempts within "
                           f"{self.restart_window_s:.0f} s{last}")
        self.state = "failed"
        log.error("%s: %s; not restarting it", self.name, self.last_error)
        return True

    def close(self, stop_child: Callable[[T], object] | None = None) -> None:
        """Stop supervising; ``stop_child`` (if given) stops the child gracefully first, while the
        supervising thread still lives (it ends afterwards, and with it any child still tied to it).
        A child whose restart was under way is stopped the same way as soon as it has started."""
        self._stop_child = stop_child
        with self._handoff:
            self._closing = True
            child = self.child
        if stop_child is not None and child is not None:
            stop_child(child)
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
