"""The two stores a benchmark can run on: a fresh embedded FalkorDB or a fresh local Neo4j (``neorag neo4j``).

    with bench_store("neo4j", workdir) as bs:
        bs.store          # a GraphStore on the empty graph
        bs.env            # NEORAG_* variables for a `neorag serve` / uvicorn child process
        bs.size()         # {"memory_mb": ..., "disk_mb": ...} of the store now
    store_files(bs)       # Neo4j: {file: bytes} of the database dir (after the stop: pages flushed)
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.core.config import Settings
from app.store.base import GraphStore
from app.store.embedded import EmbeddedServer, _compact_aof, free_port
from app.store.factory import make_store
from app.store.neo4j_runtime import Neo4jRuntime
from app.store.neo4j_server import Neo4jServer

BACKENDS = ("embedded", "neo4j")
BENCH_PASSWORD = "neorag-bench-password"


def dir_mb(path: Path) -> float:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) / 2**20 if path.exists() else 0.0


def rss_mb(pid: int) -> float:
    """Resident memory of a process (MiB)."""
    pages = int(Path(f"/proc/{pid}/statm").read_text().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


@dataclass
class BenchStore:
    """A running store with settings on its (empty) bench graph."""

    backend: str
    settings: Settings
    store: GraphStore
    pid: int
    data_dir: Path
    env: dict[str, str] = field(default_factory=dict)

    def size(self) -> dict[str, Any]:
        """Memory and disk of the store now: FalkorDB's graph memory and AOF (compacted first); Neo4j's
        store files (unflushed pages missing: :func:`store_files` after the stop) and transaction logs,
        and the JVM's resident memory (heap + page cache in use)."""
        if self.backend == "embedded":
            conn = self.store._db.connection  # type: ignore[attr-defined]  # noqa: SLF001
            mem = conn.execute_command("GRAPH.MEMORY", "USAGE", self.settings.graph_name)
            graph_mb = dict(zip(mem[::2], mem[1::2], strict=False)).get("total_graph_sz_mb", 0)
            _compact_aof("127.0.0.1", self.settings.falkor_port, 300.0)  # what `neorag db stop` does
            return {"memory_mb": float(graph_mb), "process_rss_mb": rss_mb(self.pid),
                    "disk_mb": dir_mb(self.data_dir)}
        return {"process_rss_mb": rss_mb(self.pid),
                "disk_mb": dir_mb(self.data_dir / "data" / "databases" / "neo4j"),
                "tx_logs_mb": dir_mb(self.data_dir / "data" / "transactions" / "neo4j")}


def store_files(bs: BenchStore) -> dict[str, int]:
    """Neo4j: every file of the database directory and its size in bytes. Measure after the server
    stopped: a running Neo4j holds written pages in its page cache until a checkpoint, so its store
    files lag the data (at 400k triples 129 MiB running, 161 MiB after the stop)."""
    db = bs.data_dir / "data" / "databases" / "neo4j"
    return {str(p.relative_to(db)): p.stat().st_size for p in sorted(db.rglob("*")) if p.is_file()}


@contextmanager
def bench_store(backend: str, work: Path, heap: str | None = None, pagecache: str | None = None,
                falkor_args: str | None = None,
                before_start: Callable[[Neo4jServer, Settings], None] | None = None,
                **settings: Any) -> Iterator[BenchStore]:
    """Start a fresh store of ``backend`` under ``work``; stopped (data left in ``work``) afterwards. Neo4j
    runs with NeoRAG's own defaults (NEORAG_NEO4J_HEAP / _PAGECACHE) unless ``heap`` / ``pagecache``.
    ``before_start`` (Neo4j): run on the stopped server first, e.g. a bulk import (which starts it)."""
    if backend == "embedded":
        server = (EmbeddedServer(work / "falkordb", port=free_port()) if falkor_args is None
                  else EmbeddedServer(work / "falkordb", port=free_port(), falkor_args=falkor_args))
        info = server.start()
        s = Settings(backend="embedded", falkor_data_dir=info.data_dir, falkor_port=info.port,
                     graph_name="bench", llm_base_url=None, **settings)
        env = {"NEORAG_BACKEND": "embedded", "NEORAG_FALKOR_DATA_DIR": str(info.data_dir),
               "NEORAG_FALKOR_PORT": str(info.port), "NEORAG_GRAPH_NAME": "bench"}
        store = make_store(s, info)
        try:
            yield BenchStore(backend, s, store, info.pid, info.data_dir, env)
        finally:
            store.close()
            server.stop()
        return
    base = Settings()
    neo = Neo4jServer(work / "neo4j", Neo4jRuntime(base.neo4j_cache_dir, java=base.neo4j_java),
                      bolt_port=free_port(), http_port=free_port(), password=BENCH_PASSWORD,
                      heap=heap or base.neo4j_heap, pagecache=pagecache or base.neo4j_pagecache)
    if before_start is not None:
        before_start(neo, Settings(backend="neo4j", neo4j_uri=f"bolt://127.0.0.1:{neo.bolt_port}",
                                   neo4j_password=BENCH_PASSWORD, llm_base_url=None, **settings))
    ninfo = neo.start()
    s = Settings(backend="neo4j", neo4j_uri=ninfo.uri, neo4j_password=BENCH_PASSWORD, llm_base_url=None,
                 **settings)
    env = {"NEORAG_BACKEND": "neo4j", "NEORAG_NEO4J_URI": ninfo.uri, "NEORAG_NEO4J_PASSWORD": BENCH_PASSWORD}
    store = make_store(s)
    try:
        yield BenchStore(backend, s, store, ninfo.pid, ninfo.data_dir, env)
    finally:
        store.close()
        neo.stop()
