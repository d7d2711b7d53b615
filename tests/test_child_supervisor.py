"""The one supervisor of NeoRAG's child servers (app/core/child.py), on a tiny real child process: restarts,
the give-up window, the restart hook, ``close`` while a restart is under way, dying with the supervisor."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from app.core.child import Supervisor, die_with_parent

Proc = subprocess.Popen[bytes]
SLEEPER = [sys.executable, "-c", "import time; time.sleep(60)"]


def _spawn() -> Proc:
    return subprocess.Popen(SLEEPER, stdin=subprocess.DEVNULL, preexec_fn=die_with_parent())


def _running(proc: Proc) -> bool:
    return proc.poll() is None


def _kill(proc: Proc) -> None:
    proc.kill()
    proc.wait(timeout=10)


def _wait(probe: Callable[[], bool], timeout_s: float = 30.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not probe():
        if time.monotonic() > deadline:
            raise AssertionError(f"not reached in {timeout_s} s")
        time.sleep(0.02)


@pytest.fixture
def supervisors() -> Iterator[list[Supervisor[Proc]]]:
    """Supervisors a test made; closed (children killed) at the end whatever happened."""
    made: list[Supervisor[Proc]] = []
    yield made
    for sup in made:
        sup.close(stop_child=_kill)


def _supervisor(made: list[Supervisor[Proc]], start: Callable[[], Proc] = _spawn,
                **kw: Any) -> Supervisor[Proc]:
    sup: Supervisor[Proc] = Supervisor("sleeper", start, _running, interval_s=0.05, max_backoff_s=0.1, **kw)
    made.append(sup)
    sup.run(timeout_s=30)
    return sup


def _crash_and_wait_restart(sup: Supervisor[Proc]) -> Proc:
    """SIGKILL the child; the next child once the supervisor has restarted it."""
    old, before = sup.child, sup.restarts
    assert old is not None
    _kill(old)
    _wait(lambda: sup.restarts == before + 1 and sup.state == "running")
    assert sup.child is not None and sup.child is not old and _running(sup.child)
    return sup.child


def test_a_dead_child_is_restarted_and_the_supervisor_gives_up_after_max_restarts(
        supervisors: list[Supervisor[Proc]]) -> None:
    sup = _supervisor(supervisors, max_restarts=2, restart_window_s=3600.0)
    assert sup.report() == {"state": "running", "restarts": 0, "last_error": None}
    _crash_and_wait_restart(sup)
    last = _crash_and_wait_restart(sup)
    _kill(last)  # a third death within the window: no third restart
    _wait(lambda: sup.state == "failed")
    report = sup.report()
    assert report["restarts"] == 2
    assert "gave up after 2 restart attempts within 3600 s" in report["last_error"]
    assert sup.child is last and not _running(last)
    assert sup._thread is not None
    sup._thread.join(timeout=10)
    assert not sup._thread.is_alive()  # the supervising thread ended: nothing restarts it any more


def test_restarts_outside_the_window_do_not_count_towards_the_limit(
        supervisors: list[Supervisor[Proc]]) -> None:
    # a window of 0 s: every earlier restart is outside it, so one allowed restart is never used up
    sup = _supervisor(supervisors, max_restarts=1, restart_window_s=0.0)
    for _ in range(3):
        _crash_and_wait_restart(sup)
    assert sup.report() == {"state": "running", "restarts": 3, "last_error": None}


def test_the_restart_hook_gets_each_new_child_and_cannot_stop_the_supervision(
        supervisors: list[Supervisor[Proc]]) -> None:
    seen: list[Proc] = []

    def hook(child: Proc) -> None:
        seen.append(child)
        raise ValueError("a failing listener")  # logged; the supervisor goes on

    sup = _supervisor(supervisors, on_restart=hook)
    assert seen == []  # not called for the first start
    first = _crash_and_wait_restart(sup)
    _wait(lambda: len(seen) == 1)
    second = _crash_and_wait_restart(sup)
    _wait(lambda: len(seen) == 2)
    assert seen == [first, second] and first.pid != second.pid


def test_close_during_a_restart_stops_the_child_that_restart_starts(
        supervisors: list[Supervisor[Proc]]) -> None:
    gate = threading.Event()
    started: list[Proc] = []
    stopped: list[Proc] = []

    def start() -> Proc:
        if started:
            assert gate.wait(30)  # the restart is "under way" until the test lets it finish
        proc = _spawn()
        started.append(proc)
        return proc

    def stop(proc: Proc) -> None:
        stopped.append(proc)
        _kill(proc)

    sup = _supervisor(supervisors, start)
    first = started[0]
    first.kill()
    _wait(lambda: sup.state == "restarting")
    closer = threading.Thread(target=sup.close, kwargs={"stop_child": stop})
    closer.start()
    _wait(lambda: first in stopped)  # close() has begun (it stops the current, dead, child first)
    gate.set()
    closer.join(timeout=30)
    assert not closer.is_alive()
    _wait(lambda: len(started) == 2)
    assert stopped == [first, started[1]] and not _running(started[1])
    assert sup.report() == {"state": "stopped", "restarts": 0, "last_error": None}


def test_the_child_dies_with_the_supervising_thread(supervisors: list[Supervisor[Proc]]) -> None:
    sup = _supervisor(supervisors)
    child = sup.child
    assert child is not None
    sup.close()  # no stop_child: the thread ends, and PR_SET_PDEATHSIG kills the child it forked
    assert child.wait(timeout=30) == -signal.SIGKILL
    assert sup.state == "stopped"
