"""The class-data-sharing (AppCDS) archive that lets ``neorag neo4j start`` skip most of the JVM's class
loading: built once, at install, by a throwaway Neo4j that starts on a temp dir, answers a few typical
statements (so Cypher's planner and runtime classes are in it too) and stops; the JVM writes the classes
it loaded into the archive as it exits (``-XX:ArchiveClassesAtExit``). Every later start maps the archive
(``-XX:SharedArchiveFile``, see :meth:`app.store.neo4j_server.Neo4jServer.jvm_args`); a JVM that cannot use
it (another Java, another class path) falls back to normal loading by itself (``-Xshare:auto``).
"""

from __future__ import annotations

import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from app.core.errors import ConfigError
from app.store.embedded import free_port
from app.store.neo4j_runtime import Neo4jRuntime
from app.store.neo4j_server import Neo4jServer

WARM_UP = (  # the kinds of statement NeoRAG sends: schema, batched writes, index seeks, a full-text query
    "CREATE CONSTRAINT warm_key IF NOT EXISTS FOR (n:Warm) REQUIRE n.key IS UNIQUE",
    "CREATE FULLTEXT INDEX warm_text IF NOT EXISTS FOR (n:Warm) ON EACH [n.text]",
    "UNWIND range(1, 200) AS i MERGE (n:Warm {key: i}) SET n.text = 'warm ' + toString(i)",
    "UNWIND range(1, 199) AS i MATCH (a:Warm {key: i}), (b:Warm {key: i + 1}) CREATE (a)-[:NEXT {w: i}]->(b)",
    "UNWIND $keys AS k MATCH (n:Warm {key: k})-[r:NEXT]->(m) RETURN k, collect(m.key) AS next",
    "CALL db.index.fulltext.queryNodes('warm_text', 'warm') YIELD node, score RETURN count(node)",
    "SHOW INDEXES YIELD name, state RETURN name, state",
)


@dataclass
class ArchiveReport:
    """What :func:`build_archive` did."""

    path: Path
    built_now: bool
    size_mb: float
    seconds: float


def build_archive(runtime: Neo4jRuntime, force: bool = False) -> ArchiveReport:
    """Write the archive for the runtime's Java (nothing when it exists, unless ``force``)."""
    java = runtime.java()
    runtime.ensure(java)
    target = runtime.cds_archive(java)
    if target.exists() and not force:
        return ArchiveReport(target, False, round(target.stat().st_size / 2**20, 1), 0.0)
    target.parent.mkdir(parents=True, exist_ok=True)
    for stale in target.parent.glob(f"{target.stem}.*.partial"):  # left by an interrupted build
        stale.unlink(missing_ok=True)
    partial = target.with_name(f"{target.stem}.{os.getpid()}.partial")
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="neorag-cds-") as tmp:
        server = Neo4jServer(Path(tmp), runtime, bolt_port=free_port(), http_port=free_port(),
                             password="neorag-cds-warm-up", heap="512m", pagecache="64m",
                             jvm_flags=(f"-XX:ArchiveClassesAtExit={partial}",), use_cds=False)
        server.start()
        try:
            _warm_up(server)
        finally:
            server.stop()
    if not partial.exists() or partial.stat().st_size == 0:
        raise ConfigError("the JVM wrote no class-data-sharing archive",
                          f"{java} did not dump {partial}", "Neo4j still starts, only slower; check the Java")
    partial.replace(target)
    return ArchiveReport(target, True, round(target.stat().st_size / 2**20, 1),
                         round(time.monotonic() - started, 1))


def _warm_up(server: Neo4jServer) -> None:
    from neo4j import GraphDatabase

    with GraphDatabase.driver(f"bolt://{server.host}:{server.bolt_port}",
                              auth=("neo4j", server.password), notifications_min_severity="OFF") as driver:
        for statement in WARM_UP:
            driver.execute_query(statement, {"keys": list(range(1, 50))})  # type: ignore[arg-type]
