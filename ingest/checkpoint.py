"""Checkpoint / resume: ``.ingest_ck_<basename>.json`` beside the ingested path.

Content (the seed's shape plus bookkeeping)::

    {"version": 1, "graph": "<backend>:<graph>", "path": "<abs path>", "complete": false,
     "chunks": {"<chunk id>": {"emb": true, "ent": true}},
     "rel_pairs": {"<a>|<b>": {"rels": 1} | {"err": "..."}}}

A chunk is recorded only after its writes committed, so a crash (even ``kill -9``) never marks
unfinished work. ``complete`` turns true after the relation stages finish; a run that finds an
incomplete checkpoint recomputes derived data (freq, CO_OCCURS, RELATES_TO) for every source it
scans. Writes are atomic (temp file + rename) and throttled to one per ``min_interval_s``.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import threading
import time
from pathlib import Path
from typing import Any


def checkpoint_path(target: Path, checkpoint_dir: Path | None, state_dir: Path) -> Path:
    """Where the checkpoint for ``target`` lives.

    ``checkpoint_dir`` set: there (name suffixed by a path hash). Otherwise beside ``target``,
    or in ``state_dir`` when that directory is not writable (e.g. read-only datasets).
    """
    name = f".ingest_ck_{target.name}.json"
    suffixed = f".ingest_ck_{target.name}-{hashlib.sha1(str(target).encode()).hexdigest()[:8]}.json"
    if checkpoint_dir is not None:
        return checkpoint_dir / suffixed
    parent = target.parent
    if _writable(parent):
        return parent / name
    return state_dir / suffixed


def _writable(directory: Path) -> bool:
    """Writable for us and not marked read-only (no write bit at all, which also binds root)."""
    try:
        mode = directory.stat().st_mode
    except OSError:
        return False
    return bool(mode & 0o222) and os.access(directory, os.W_OK)


class Checkpoint:
    """The in-memory checkpoint of one run, saved atomically."""

    def __init__(self, path: Path | None, graph: str, target: str, min_interval_s: float = 1.0) -> None:
        self.path, self.graph, self.target = path, graph, target
        self.min_interval_s = min_interval_s
        self.chunks: dict[str, dict[str, Any]] = {}
        self.rel_pairs: dict[str, dict[str, Any]] = {}
        self.complete = False
        self.was_incomplete = False  # an earlier run stopped before finishing
        self._lock = threading.Lock()
        self._last_save = 0.0

    @classmethod
    def load(cls, path: Path | None, graph: str, target: str, fresh: bool = False) -> Checkpoint:
        """Read the checkpoint (ignored when absent, unreadable, for another graph, or ``fresh``)."""
        ck = cls(path, graph, target)
        if path is None or fresh or not path.is_file():
            return ck
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return ck
        if not isinstance(data, dict) or data.get("graph") != graph:
            return ck
        ck.chunks = {k: v for k, v in (data.get("chunks") or {}).items() if isinstance(v, dict)}
        ck.rel_pairs = {k: v for k, v in (data.get("rel_pairs") or {}).items() if isinstance(v, dict)}
        ck.was_incomplete = not data.get("complete", False)
        return ck

    def chunk_done(self, chunk_id: str) -> bool:
        """Embedding and entities of the chunk finished in an earlier run."""
        entry = self.chunks.get(chunk_id)
        return bool(entry and entry.get("emb") and entry.get("ent"))

    def mark_chunks(self, ids: list[str]) -> None:
        with self._lock:
            for cid in ids:
                self.chunks[cid] = {"emb": True, "ent": True}
            self.complete = False
        self.save()

    def pair_done(self, a: str, b: str) -> bool:
        return f"{a}|{b}" in self.rel_pairs

    def mark_pair(self, a: str, b: str, rels: int = 0, err: str | None = None) -> None:
        with self._lock:
            self.rel_pairs[f"{a}|{b}"] = {"err": err} if err else {"rels": rels}
        self.save()

    def forget_chunks(self, ids: set[str]) -> None:
        """Drop entries of deleted chunks (and their pairs)."""
        with self._lock:
            for cid in ids:
                self.chunks.pop(cid, None)
            if ids:
                self.rel_pairs = {k: v for k, v in self.rel_pairs.items()
                                  if not (set(k.split("|")) & ids)}

    def reset_pairs(self) -> None:
        with self._lock:
            self.rel_pairs = {}

    def finish(self) -> None:
        with self._lock:
            self.complete = True
        self.save(force=True)

    def save(self, force: bool = False) -> None:
        """Write atomically (at most once per ``min_interval_s`` unless ``force``)."""
        if self.path is None:
            return
        now = time.monotonic()
        if not force and now - self._last_save < self.min_interval_s:
            return
        with self._lock:
            data = {"version": 1, "graph": self.graph, "path": self.target, "complete": self.complete,
                    "chunks": dict(self.chunks), "rel_pairs": dict(self.rel_pairs)}
            self._last_save = now
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".ck-", dir=str(self.path.parent))
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(data, fh)
            os.replace(tmp, self.path)
        except OSError:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise
