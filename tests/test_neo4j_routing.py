"""Every statement is routable on a Neo4j cluster / AuraDB: reads in read transactions, writes in write ones.

Neo4j's planner says what a statement does (``EXPLAIN``: the summary's ``query_type`` is ``r`` read-only,
``rw`` / ``w`` writes, ``s`` schema). NeoRAG picks the transaction from the statement's text
(``Statement.is_write``); here the two must agree for every statement the Neo4j backend runs. A write
classified as a read fails on a cluster follower (and on a single server: "Writing in read access mode
not allowed"); a read classified as a write is sent to the leader, away from the followers meant to serve it.
"""

from __future__ import annotations

import re

import neo4j
import pytest

from app.core.config import REPO_ROOT
from app.store.cypher_library import CypherLibrary
from tests.support.backends import Backend

pytestmark = pytest.mark.backends("neo4j")  # EXPLAIN on the real Neo4j
DDL = re.compile(r"^\s*(CREATE|DROP)\s", re.M)


def test_read_write_classification_matches_neo4j_planner(backend: Backend) -> None:
    settings = backend.settings()
    library = CypherLibrary(REPO_ROOT / "cypher", "neo4j")
    wrong: list[str] = []
    kinds: dict[str, int] = {}
    with neo4j.GraphDatabase.driver(settings.neo4j_uri, auth=(settings.neo4j_user,
                                                                 settings.neo4j_password),
                                    notifications_min_severity="OFF") as driver:
        with driver.session(database=settings.neo4j_database) as session:
            for name in library.names():
                statement = library.get(name)
                kind = session.run("EXPLAIN " + statement.text).consume().query_type  # type: ignore[arg-type]
                kinds[kind] = kinds.get(kind, 0) + 1
                # "s": schema (DDL, a write) or a DBMS procedure such as dbms.components() (a read)
                writes = kind in ("w", "rw") or (kind == "s" and bool(DDL.search(statement.text)))
                if writes != statement.is_write:
                    wrong.append(f"{name}: planner says {kind!r}, NeoRAG runs it as a "
                                 f"{'write' if statement.is_write else 'read'}")
    assert not wrong, "\n".join(wrong)
    assert kinds.get("r", 0) > 30 and kinds.get("s", 0) > 10 and kinds.get("w", 0) + kinds.get("rw", 0) > 30
