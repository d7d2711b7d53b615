"""A lock held in the graph store (an ``IngestLock`` node), so NeoRAG processes sharing one store never run
the same ingest twice. The holder renews it (heartbeat every third of its TTL); a holder that died stops
renewing, and its lock expires after the TTL."""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
import uuid
from types import TracebackType

from app.core.errors import BadInput, StoreUnavailable
from app.store.base import GraphStore

log = logging.getLogger(__name__)
PROCESS_ID = f"{socket.gethostname()}:{os.getpid()}"
RELEASE_ATTEMPTS = 3


def job_phrase(what: str) -> str:
    """How a 409 names the running job: "a delete" or "an ingest"."""
    return "a delete" if what == "delete" else "an ingest"


class StoreLock:
    """The store lock of ``key`` for one holder (this process, one job); a context manager."""

    def __init__(self, store: GraphStore, key: str, what: str, ttl_s: float) -> None:
        self.store, self.key, self.what = store, key, what
        self.ttl_ms = int(ttl_s * 1000)
        self.holder = f"{PROCESS_ID}:{uuid.uuid4().hex[:8]}"
        self.lost = False
        self._stop = threading.Event()
        self._beat: threading.Thread | None = None

    def acquire(self, field: str = "path") -> None:
        """Take the lock, or raise a 409 naming the holder and when its lock expires."""
        rows = self.store.run("ingest_lock_acquire", {"key": self.key, "holder": self.holder,
                                                      "what": self.what, "ttl_ms": self.ttl_ms})
        if not rows:
            held = self.store.run("ingest_lock_get", {"key": self.key})
            who = held[0] if held else {}
            doing = job_phrase(str(who.get("what")))
            left = max(0.0, float(who.get("expires_in_ms") or 0) / 1000)
            raise BadInput(f"{field}: {doing} of {self.key} is already running in another NeoRAG process "
                           f"({who.get('holder', '?')}, sharing this store); wait for it to finish (a holder "
                           f"that died loses the lock {left:.0f} s from now)", status=409, field=field)
        self._beat = threading.Thread(target=self._heartbeat, name=f"lock:{self.key[-30:]}", daemon=True)
        self._beat.start()

    def _heartbeat(self) -> None:
        while not self._stop.wait(self.ttl_ms / 3000):
            try:
                renewed = self.store.run("ingest_lock_renew", {"key": self.key, "holder": self.holder,
                                                               "ttl_ms": self.ttl_ms})
            except Exception as exc:  # noqa: BLE001 - the store may be restarting: try again next beat
                log.warning("renewing the ingest lock of %s failed: %s", self.key, exc)
                continue
            if not renewed or not renewed[0].get("renewed"):
                self.lost = True
                log.error("the ingest lock of %s was lost (expired and taken over)", self.key)
                return

    def release(self) -> None:
        """Stop the heartbeat and drop the lock, retried on a fresh connection; when the store cannot drop
        it, an error (logged, and raised as StoreUnavailable): the path stays locked until the TTL ends."""
        self._stop.set()
        if self._beat is not None and self._beat is not threading.current_thread():
            self._beat.join(timeout=5)
        failure: Exception | None = None
        for attempt in range(RELEASE_ATTEMPTS):
            try:
                self.store.run("ingest_lock_release", {"key": self.key, "holder": self.holder})
                return
            except Exception as exc:  # noqa: BLE001 - retried, then reported below
                failure = exc
                time.sleep(0.2 * (attempt + 1))
        ttl = self.ttl_ms / 1000
        log.error("releasing the ingest lock of %s failed %d times: %s: %s; %s of it is refused (409) until "
                  "the lock expires (%.0f s)", self.key, RELEASE_ATTEMPTS, type(failure).__name__, failure,
                  job_phrase(self.what), ttl, exc_info=failure)
        raise StoreUnavailable(f"the {self.what} of {self.key} finished, but releasing its lock in the store "
                               "failed", f"{type(failure).__name__}: {failure}",
                               f"the lock expires by itself {ttl:.0f} s after its last renewal "
                               "(NEORAG_INGEST_LOCK_TTL_S); check the store") from failure

    def __enter__(self) -> StoreLock:
        self.acquire()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if exc is None:
            self.release()
            return
        try:
            self.release()
        except StoreUnavailable:
            pass  # logged by release; the block's own exception is the one to report
