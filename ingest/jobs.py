"""Ingest jobs: one running ingest per path (409 otherwise; held in-process and, against other processes on
the same store, by a lock in the store), run on a background thread with an event queue.

A job keeps running when its SSE client disconnects: the ingest always completes (or fails) in
the background, so the graph never holds a half-written batch beyond what a resume repairs.
"""

from __future__ import annotations

import logging
import queue
import threading
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from app.core.errors import BadInput, NeoRAGError
from app.services.container import Services
from app.services.store_lock import StoreLock, job_phrase
from ingest.options import IngestOptions

log = logging.getLogger(__name__)
RESULT = "__result__"
AfterJob = Callable[[dict[str, Any]], None]  # called with a finished job's result, the path still held
ERROR = "__error__"
_REGISTRY_LOCK = threading.Lock()


def run_ingest(services: Services, path: Path, options: IngestOptions,
               progress: Callable[[dict[str, Any]], None] | None = None) -> dict[str, Any]:
    """Full ingest or relations-only mode, as a JSON-ready dict."""
    if options.inc_rel_only:
        from ingest.relations_only import ingest_relations_only

        return ingest_relations_only(services, path, options, progress).as_dict()
    from ingest.pipeline import ingest_path

    return ingest_path(services, path, options, progress).as_dict()


class IngestJob:
    """One ingest of one path; events are read with ``drain``."""

    def __init__(self, key: str, path: Path, options: IngestOptions) -> None:
        self.key, self.path, self.options = key, path, options
        self.events: queue.Queue[dict[str, Any]] = queue.Queue()
        self.done = threading.Event()
        self.result: dict[str, Any] | None = None
        self.error: BaseException | None = None
        self.what = "ingest"  # or "delete" (a path held by IngestJobs.holding)
        self.store_lock: StoreLock | None = None  # the same path held against other processes on the store
        self.aof_rewrite_mb = 0  # NEORAG_FALKOR_AOF_REWRITE_MB of the services it runs on

    def emit(self, event: dict[str, Any]) -> None:
        self.events.put(event)

    def drain(self) -> list[dict[str, Any]]:
        """Every event queued so far."""
        out = []
        while True:
            try:
                out.append(self.events.get_nowait())
            except queue.Empty:
                return out


class IngestJobs:
    """Registry of running ingests, keyed by resolved path."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._active: dict[str, IngestJob] = {}

    def _claim(self, path: Path, options: IngestOptions, services: Services) -> IngestJob:
        key = str(path)
        with self._lock:
            if key in self._active:
                doing = job_phrase(self._active[key].what)
                raise BadInput(f"path: {doing} of {key} is already running; wait for it to finish",
                               status=409, field="path")
            job = IngestJob(key, path, options)
            self._active[key] = job
        self._lock_in_store(job, services, "path")
        return job

    def _lock_in_store(self, job: IngestJob, services: Services, field: str) -> None:
        """Hold the path against other processes on the same store too (409 when one holds it)."""
        lock = StoreLock(services.store, job.key, job.what, services.settings.ingest_lock_ttl_s)
        try:
            lock.acquire(field)
        except BaseException:
            with self._lock:
                self._active.pop(job.key, None)
            raise
        job.store_lock = lock
        job.aof_rewrite_mb = services.settings.falkor_aof_rewrite_mb

    def _release(self, job: IngestJob) -> None:
        """Drop the store lock, then the in-process claim; raises StoreUnavailable when the store lock could
        not be dropped (the claim is dropped all the same). The embedded store's AOF is compacted first
        when the job grew it past NEORAG_FALKOR_AOF_REWRITE_MB (crash recovery stays fast)."""
        try:
            if job.store_lock is not None:
                compact_after_job(job.store_lock.store, job.aof_rewrite_mb)
                job.store_lock.release()
        finally:
            with self._lock:
                self._active.pop(job.key, None)
            job.done.set()

    def _release_after_failure(self, job: IngestJob) -> None:
        """Release after the job itself failed: its exception is the one reported (a failed release is
        logged as an error by StoreLock.release)."""
        try:
            self._release(job)
        except NeoRAGError:
            pass

    @contextmanager
    def holding(self, path: Path, what: str, services: Services | None = None) -> Iterator[None]:
        """Keep ``path`` from being ingested while ``what`` (e.g. a delete) runs: 409 now if an ingest of it
        or of a folder holding it is running, and 409 for an ingest of it until this block ends."""
        key = str(path)
        with self._lock:
            busy = [k for k in self._active if key == k or key.startswith(k.rstrip("/") + "/")]
            if busy:
                raise BadInput(f"id: {busy[0]} is being ingested or changed right now; retry when it "
                               "finishes", status=409, field="id")
            job = IngestJob(key, path, IngestOptions())
            job.what = what
            self._active[key] = job
        if services is not None:
            self._lock_in_store(job, services, "id")
        try:
            yield
        except BaseException:
            self._release_after_failure(job)
            raise
        self._release(job)

    def running(self) -> list[str]:
        with self._lock:
            return sorted(self._active)

    def run_sync(self, services: Services, path: Path, options: IngestOptions,
                 progress: Callable[[dict[str, Any]], None] | None = None,
                 after: AfterJob | None = None) -> dict[str, Any]:
        """Run in the calling thread (POST /ingest, POST /documents, MCP, the CLI); 409 when the path is
        already being ingested. ``after(result)`` runs while the path is still held; the locks are released
        before the result is returned."""
        job = self._claim(path, options, services)
        try:
            result = run_ingest(services, path, options, progress)
            if after is not None:
                after(result)
        except BaseException:
            self._release_after_failure(job)
            raise
        self._release(job)
        return result

    def start(self, services: Services, path: Path, options: IngestOptions,
              after: AfterJob | None = None) -> IngestJob:
        """Start in a background thread (GET /ingest/stream); 409 when already running. ``after`` as in
        :meth:`run_sync`."""
        job = self._claim(path, options, services)

        def work() -> None:
            # the locks are released BEFORE the last event: a client that saw the result may ingest again
            final: dict[str, Any]
            try:
                job.result = run_ingest(services, path, options, job.emit)
                if after is not None:
                    after(job.result)
                final = {RESULT: job.result}
            except BaseException as exc:  # noqa: BLE001 - reported as an error event
                job.error = exc
                message = str(exc) if isinstance(exc, NeoRAGError) else f"{type(exc).__name__}: {exc}"
                if not isinstance(exc, NeoRAGError):
                    log.error("ingest of %s failed: %s", path, traceback.format_exc())
                final = {ERROR: message}
                self._release_after_failure(job)
            else:
                try:
                    self._release(job)
                except NeoRAGError as exc:  # the ingest is done, but its lock stays: an error, not a result
                    job.error = exc
                    final = {ERROR: str(exc)}
            job.emit(final)

        threading.Thread(target=work, name=f"ingest:{path.name}", daemon=True).start()
        return job


def compact_after_job(store: Any, rewrite_mb: int) -> bool:
    """After a write job on the embedded store: rewrite its AOF when it grew past ``rewrite_mb`` MB."""
    if getattr(store, "backend", None) != "embedded" or rewrite_mb <= 0:
        return False
    from app.store.aof import compact_if_grown

    return compact_if_grown(store.host, store.port, rewrite_mb * 1_000_000)


def ingest_jobs(services: Services) -> IngestJobs:
    """The process's job registry (kept in ``services.extras['ingest_jobs']``)."""
    with _REGISTRY_LOCK:
        jobs = services.extras.get("ingest_jobs")
        if not isinstance(jobs, IngestJobs):
            jobs = IngestJobs()
            services.extras["ingest_jobs"] = jobs
        return jobs
