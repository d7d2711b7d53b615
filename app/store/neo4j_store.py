"""Neo4j 5 adapter over the official ``neo4j`` driver."""

from __future__ import annotations

from typing import Any

import neo4j
from neo4j import GraphDatabase
from neo4j.exceptions import AuthError, Neo4jError, ServiceUnavailable, SessionExpired

from app.core.errors import ConfigError, StatementError, StoreUnavailable
from app.store.base import Capabilities, GraphStore, Row, StoreHealth
from app.store.cypher_library import CypherLibrary


def to_plain(value: Any) -> Any:
    """Convert neo4j driver values into plain Python values."""
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
        reconnect_wait_s: float = 5.0,
    ) -> None:
        """``reconnect_wait_s`` bounds the driver's retries of a dropped or refused connection
        (ServiceUnavailable / SessionExpired): a restarting Neo4j is waited for that long, then 503."""
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
                max_transaction_retry_time=reconnect_wait_s,
            )
        except ValueError as exc:
            raise ConfigError(f"bad Neo4j URI {uri!r}", str(exc),
                              "set NEORAG_NEO4J_URI=bolt://host:7687") from exc

    def _execute(self, text: str, params: dict[str, Any], write: bool) -> list[Row]:
        def work(tx: neo4j.ManagedTransaction) -> list[Row]:
            result = tx.run(text, params)
            return [{k: to_plain(v) for k, v in rec.items()} for rec in result]

        try:
            with self._driver.session(database=self.database) as session:
                if write:
                    return session.execute_write(work)
                return session.execute_read(work)
        except (ServiceUnavailable, SessionExpired, OSError) as exc:
            raise StoreUnavailable(
                f"Neo4j at {self.uri} is unreachable", str(exc), "start Neo4j or fix NEORAG_NEO4J_URI"
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

    def capabilities(self) -> Capabilities:
        return Capabilities(extras={"database": self.database})

    def close(self) -> None:
        self._driver.close()
