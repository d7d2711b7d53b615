"""Neo4j 5 adapter over the official ``neo4j`` driver.

Every statement is routable, so the same settings reach a single server, a cluster or AuraDB
(``neo4j+s://`` URIs): reads run as auto-commit queries of read sessions (followers may serve them; one
network round trip instead of the managed transaction's two, retried here while the server is away),
writes in write transactions (the leader), statements flagged ``@auto-commit`` (``CALL { } IN
TRANSACTIONS``) in an auto-commit transaction of a write session. All sessions share the driver's
bookmark manager, so a read always sees the writes made before it, whichever cluster member serves it.
"""

from __future__ import annotations

import time
from typing import Any

import neo4j
from neo4j import GraphDatabase
from neo4j.exceptions import AuthError, Neo4jError, ServiceUnavailable, SessionExpired, TransientError

from app.core.errors import ConfigError, StatementError, StoreUnavailable
from app.store.base import Capabilities, GraphStore, Prepared, Row, StoreHealth
from app.store.cypher_library import CypherLibrary

_SCALARS = frozenset({str, int, float, bool, type(None), bytes})


def to_plain(value: Any) -> Any:
    """Convert neo4j driver values into plain Python values."""
    if type(value) in _SCALARS:  # most values: one set lookup instead of four isinstance checks
        return value
    if isinstance(value, neo4j.graph.Node | neo4j.graph.Relationship):
        return {k: to_plain(v) for k, v in dict(value).items()}
    if isinstance(value, neo4j.graph.Path):
        return {
            "nodes": [to_plain(n) for n in value.nodes],
            "relationships": [to_plain(r) for r in value.relationships],
        }
    if isinstance(value, dict):
        return {k: to_plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_plain(v) for v in value]
    return value


class Neo4jStore(GraphStore):
    """GraphStore on Neo4j 5 (managed transactions retry transient errors)."""

    backend = "neo4j"
    dialect = "neo4j"

    def __init__(
        self,
        library: CypherLibrary,
        uri: str,
        user: str,
        password: str,
        database: str = "neo4j",
        batch_size: int = 2000,
        timeout_s: float = 30.0,
        max_retry_s: float = 1.0,
        reconnect_wait_s: float = 5.0,
    ) -> None:
        """``reconnect_wait_s`` bounds the driver's retries of a dropped or refused connection
        (ServiceUnavailable / SessionExpired): a restarting Neo4j is waited for that long, then 503.
        The driver has one retry budget for all transient failures: the larger of the two is used."""
        super().__init__(library, batch_size)
        self.uri, self.database = uri, database
        self.timeout_s = timeout_s
        try:
            self._driver = GraphDatabase.driver(
                uri,
                auth=(user, password),
                max_connection_pool_size=50,
                connection_acquisition_timeout=timeout_s,
                connection_timeout=min(timeout_s, 5.0),
                max_transaction_retry_time=max(max_retry_s, reconnect_wait_s),
                notifications_min_severity="OFF",  # e.g. "no REL edges yet" warnings: normal for NeoRAG
            )
        except ValueError as exc:
            raise ConfigError(f"bad Neo4j URI {uri!r}", str(exc),
                              "set NEORAG_NEO4J_URI=bolt://host:7687 (neo4j+s://host for AuraDB)") from exc
        self._bookmarks = self._driver.execute_query_bookmark_manager
        self._retry_s = max(max_retry_s, reconnect_wait_s)

    def _session(self, write: bool) -> neo4j.Session:
        mode = neo4j.WRITE_ACCESS if write else neo4j.READ_ACCESS
        return self._driver.session(database=self.database, default_access_mode=mode,
                                    bookmark_manager=self._bookmarks)

    def run_prepared(self, prepared: Prepared) -> list[Row]:
        """Send a prepared statement; ``@auto-commit`` ones outside a managed transaction."""
        if not prepared.autocommit:
            return super().run_prepared(prepared)
        self.round_trips += 1
        return self._guarded(lambda: self._auto_commit(prepared.text, prepared.params))

    def _auto_commit(self, text: str, params: dict[str, Any]) -> list[Row]:
        with self._session(write=True) as session:
            result = session.run(text, params)  # type: ignore[arg-type]  # a named file, not user text
            return [{k: to_plain(v) for k, v in rec.items()} for rec in result]

    def _execute(self, text: str, params: dict[str, Any], write: bool) -> list[Row]:
        def work(tx: neo4j.ManagedTransaction) -> list[Row]:
            result = tx.run(text, params)  # type: ignore[arg-type]
            return [{k: to_plain(v) for k, v in rec.items()} for rec in result]

        def run() -> list[Row]:
            with self._session(write) as session:
                return session.execute_write(work)

        if not write:
            return self._guarded(lambda: self._read(text, params))
        return self._guarded(run)

    def _read(self, text: str, params: dict[str, Any]) -> list[Row]:
        """A read as one auto-commit query (RUN + PULL in one round trip), retried with backoff while the
        server is away or busy, for up to the driver's retry budget (reads are safe to repeat)."""
        deadline = time.monotonic() + self._retry_s
        delay = 0.05
        while True:
            try:
                with self._session(write=False) as session:
                    result = session.run(text, params)  # type: ignore[arg-type]  # a named file
                    return [{k: to_plain(v) for k, v in rec.items()} for rec in result]
            except (ServiceUnavailable, SessionExpired, TransientError):
                if time.monotonic() + delay > deadline:
                    raise
                time.sleep(delay)
                delay = min(delay * 2, 1.0)

    def _guarded(self, call: Any) -> list[Row]:
        try:
            rows: list[Row] = call()
            return rows
        except (ServiceUnavailable, SessionExpired, OSError) as exc:
            raise StoreUnavailable(
                f"Neo4j at {self.uri} is unreachable", str(exc),
                "run `neorag neo4j start` (or start your Neo4j) or fix NEORAG_NEO4J_URI",
            ) from exc
        except AuthError as exc:
            raise StoreUnavailable(
                "Neo4j refused the credentials", str(exc), "set NEORAG_NEO4J_USER / NEORAG_NEO4J_PASSWORD"
            ) from exc
        except Neo4jError as exc:
            raise StatementError("Neo4j rejected a statement", str(exc)) from exc

    def health(self) -> StoreHealth:
        try:
            info = self._driver.get_server_info()
            version = str(info.agent).split('/', 1)[-1]  # agent is 'Neo4j/5.26.0'
            return StoreHealth(True, self.backend, f"Neo4j {version}")
        except Exception as exc:  # noqa: BLE001 - a probe never raises
            return StoreHealth(False, self.backend, None, f"{type(exc).__name__}: {exc}")

    def server_details(self) -> dict[str, Any]:
        """Name, version and edition of the server (``dbms.components()``), and the database used."""
        rows = self.run("server_components")
        details: dict[str, Any] = dict(rows[0]) if rows else {}
        details["database"] = self.database
        return details

    def capabilities(self) -> Capabilities:
        return Capabilities(extras={"database": self.database})

    def close(self) -> None:
        self._driver.close()
