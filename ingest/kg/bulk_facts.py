"""The fact-bucket half of the bulk CSV pass in worker processes (``kg_bulk_workers``).

Encoding a sample's buckets (:func:`app.kg.facts.encode_facts`, JSON per entity line) is about half of the
CSV pass and needs nothing from other samples; the rest (entity ids, whole-graph triple counts, the sample
rows) is shared state and stays in the writer's process. :class:`FactsPool` sends batches of samples to
worker processes (``python -m ingest.kg.bulk_facts FOLDER``: plain child processes, so the caller's
``__main__`` is never imported again, as ``multiprocessing``'s spawn would); each worker writes the
``KGFacts`` rows of the samples that fit the importer into its own ``facts.part<pid>.csv`` and answers, per
sample, None or why it cannot be imported. The writer commits samples in the order it read them, so its
output is the one the in-process pass writes, with the buckets split over more files.

Messages on the pipes: an 8-byte little-endian length, then a :mod:`marshal` dump (parent and workers run
the same interpreter; about half the cost of a pickle for lists of string tuples): a batch of
:data:`Task` with each ``FactsExtra`` as a tuple of its fields one way, a list of verdicts the other; a zero
length ends a worker.
"""

from __future__ import annotations

import marshal
import os
import subprocess
import sys
import tempfile
from collections import deque
from collections.abc import Callable, Collection
from dataclasses import fields
from pathlib import Path
from typing import IO, Any

from app.core.errors import NeoRAGError
from app.kg.facts import FactsExtra, encode_facts

MAX_FIELD_CHARS = 1_000_000  # any value: well inside the tool's 4 MiB read buffer (4 bytes a char)
TOO_BIG = "a fact bucket is larger than the import's read buffer"
PART_GLOB = "facts.part*.csv"  # the workers' files, beside the writer's facts.csv and facts.header.csv
BATCH_TRIPLES = 50_000  # triples per message: the marshal cost well above the per-message cost

Task = tuple[str, list[tuple[str, str, str]], FactsExtra | None]  # (sample key, its triples, extra)


def q(text: str) -> str:
    """A CSV string field, always quoted (RFC 4180: inner quotes doubled)."""
    return '"' + text.replace('"', '""') + '"' if '"' in text else '"' + text + '"'


def facts_lines(key: str, triples: Collection[tuple[str, str, str]],
                extra: FactsExtra | None) -> tuple[int, str | None, str]:
    """(bucket count, why it cannot be imported or None, its ``KGFacts`` CSV rows) for a sample's triples
    (repeats collapse; the buckets list them sorted)."""
    buckets, rows = encode_facts(key, sorted(set(triples)), extra)
    if any(len(row["facts"]) > MAX_FIELD_CHARS for row in rows):
        return buckets, TOO_BIG, ""
    return buckets, None, "".join(f'{q(r["key"])},{q(r["sample"])},{q(r["facts"])}\n' for r in rows)


def astuple_shallow(extra: FactsExtra) -> tuple[Any, ...]:
    """A ``FactsExtra``'s fields in order (marshal carries builtins only)."""
    return tuple(getattr(extra, f.name) for f in fields(extra))


def _send(pipe: IO[bytes], value: Any) -> None:
    data = marshal.dumps(value)
    pipe.write(len(data).to_bytes(8, "little"))
    pipe.write(data)
    pipe.flush()


def _receive(pipe: IO[bytes]) -> Any:
    """The next message, or None at a zero length or the end of the pipe."""
    head = pipe.read(8)
    size = int.from_bytes(head, "little") if len(head) == 8 else 0
    if not size:
        return None
    data = pipe.read(size)
    if len(data) != size:
        return None
    return marshal.loads(data)


def serve(folder: Path, inbox: IO[bytes], outbox: IO[bytes]) -> None:
    """Worker loop: for each batch, write the rows of the samples that fit, answer their verdicts."""
    with open(folder / f"facts.part{os.getpid()}.csv", "w", encoding="utf-8", newline="") as out:
        while (batch := _receive(inbox)) is not None:
            verdicts, text = [], []
            for key, triples, extra in batch:
                _, problem, lines = facts_lines(key, triples, None if extra is None else FactsExtra(*extra))
                verdicts.append(problem)
                text.append(lines)
            out.write("".join(text))
            out.flush()  # on disk before the answer: the writer may hand the files over once answered
            _send(outbox, verdicts)


class _Worker:
    """One child process and its pipes (its stderr kept in a file for the error message)."""

    def __init__(self, folder: Path) -> None:
        root = str(Path(__file__).resolve().parents[2])  # the folder holding ``app`` and ``ingest``
        path = os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))
        env = {**os.environ, "PYTHONPATH": path}
        self.errors = tempfile.TemporaryFile()  # noqa: SIM115 - closed in close()
        self.proc = subprocess.Popen([sys.executable, "-m", "ingest.kg.bulk_facts", str(folder)], env=env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.errors)
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.inbox, self.outbox = self.proc.stdin, self.proc.stdout

    def failed(self) -> NeoRAGError:
        self.proc.wait(timeout=30)
        self.errors.seek(0)
        lines = [ln for ln in self.errors.read().decode("utf-8", "replace").splitlines() if ln.strip()]
        return NeoRAGError(f"a bulk CSV worker failed (exit {self.proc.returncode})",
                                " | ".join(lines[-2:])[:400] or "no output", "rerun with kg_bulk_workers=0")

    def close(self, kill: bool = False) -> None:
        if kill:
            self.proc.kill()
        for pipe in (self.inbox, self.outbox):
            try:
                pipe.close()
            except OSError:
                pass
        self.proc.wait(timeout=60)
        self.errors.close()


class FactsPool:
    """Batches of samples to ``workers`` child processes, answers taken back in submission order.

    ``submit(item, task)`` queues one sample; ``on_verdict(item, problem)`` is called for each, in order,
    once its worker has answered (from :meth:`submit`, :meth:`drain` or :meth:`finish`)."""

    def __init__(self, folder: Path, workers: int, on_verdict: Callable[[Any, str | None], None],
                 batch_triples: int = BATCH_TRIPLES) -> None:
        self.on_verdict = on_verdict
        self.batch_triples = batch_triples
        self.workers = [_Worker(folder) for _ in range(workers)]
        self.window = 2 * workers  # batches in flight: one being encoded and one waiting, per worker
        self.items: list[Any] = []
        self.tasks: list[Task] = []
        self.size = 0
        self.sent = 0
        self.flight: deque[tuple[_Worker, list[Any]]] = deque()

    def submit(self, item: Any, task: Task) -> None:
        self.items.append(item)
        self.tasks.append(task)
        self.size += len(task[1]) + 1
        if self.size >= self.batch_triples:
            self._send()

    def drain(self) -> None:
        """Send what is queued and take every answer."""
        self._send()
        while self.flight:
            self._take()

    def finish(self) -> None:
        """:meth:`drain`, then end the workers (their files are complete)."""
        self.drain()
        for worker in self.workers:
            try:
                worker.inbox.write((0).to_bytes(8, "little"))
                worker.inbox.flush()
            except OSError as exc:
                raise worker.failed() from exc
            worker.close()
            if worker.proc.returncode:
                raise worker.failed()

    def terminate(self) -> None:
        """End the workers at once (after a failure)."""
        for worker in self.workers:
            worker.close(kill=True)

    def _send(self) -> None:
        if not self.tasks:
            return
        while len(self.flight) >= self.window:
            self._take()
        worker = self.workers[self.sent % len(self.workers)]
        self.sent += 1
        try:
            _send(worker.inbox, [(key, triples, None if extra is None else astuple_shallow(extra))
                                 for key, triples, extra in self.tasks])
        except OSError as exc:
            raise worker.failed() from exc
        self.flight.append((worker, self.items))
        self.items, self.tasks, self.size = [], [], 0

    def _take(self) -> None:
        worker, items = self.flight.popleft()
        verdicts = _receive(worker.outbox)
        if verdicts is None or len(verdicts) != len(items):
            raise worker.failed()
        for item, problem in zip(items, verdicts, strict=True):
            self.on_verdict(item, problem)


if __name__ == "__main__":
    serve(Path(sys.argv[1]), sys.stdin.buffer, sys.stdout.buffer)
