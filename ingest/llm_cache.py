"""A cache of LLM extraction results, so a re-ingest or a refresh does not call the model again.

Keyed by sha1 of (task, prompt version, model, chunk text hash, task parameters such as the configured
types or the entity names offered): a change of model, prompt or types is a miss, a changed chunk too.
Where: one SQLite file in the data dir (``NEORAG_LLM_CACHE_PATH``, default ``<data dir>/llm_cache.sqlite3``),
not the graph. A model's reply depends on the text and the model, not on which graph or backend the chunk
went into, so the same corpus ingested into a fresh graph, or into Neo4j after FalkorDB, reuses it; the
graph holds no large JSON blobs outside the schema; SQLite is in the standard library, safe across threads
(one lock) and processes (WAL). Replies skipped after a retry are cached as ``{"skipped": reason}`` (a
deterministic model fails the same way again); endpoint failures are never cached.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any


def cache_key(*parts: object) -> str:
    """A stable key over the parts (JSON-encoded)."""
    return hashlib.sha1(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()


class ExtractionCache:
    """get/put JSON values by key; ``path=None`` disables it (every get misses, put does nothing)."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.hits = self.misses = 0
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(str(path), timeout=30, check_same_thread=False)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("CREATE TABLE IF NOT EXISTS extraction "
                             "(key TEXT PRIMARY KEY, task TEXT, value TEXT, created REAL)")
            self._db.commit()

    def get(self, key: str) -> Any | None:
        """The cached value, or None."""
        if self._db is None:
            return None
        with self._lock:
            row = self._db.execute("SELECT value FROM extraction WHERE key = ?", (key,)).fetchone()
            if row is None:
                self.misses += 1
                return None
            self.hits += 1
        return json.loads(row[0])

    def put(self, key: str, task: str, value: Any) -> None:
        """Store ``value`` (JSON-encodable) under ``key``."""
        if self._db is None:
            return
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO extraction (key, task, value, created) "
                             "VALUES (?, ?, ?, ?)", (key, task, json.dumps(value), time.time()))
            self._db.commit()

    def size(self) -> int:
        if self._db is None:
            return 0
        with self._lock:
            return int(self._db.execute("SELECT count(*) FROM extraction").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None
