"""FalkorDB adapter over the native ``falkordb`` client (redis protocol)."""

from __future__ import annotations

from typing import Any

import redis
from falkordb import FalkorDB
from falkordb.edge import Edge
from falkordb.node import Node
from falkordb.path import Path as FalkorPath

from app.core.errors import StatementError, StoreUnavailable
from app.store.base import Capabilities, GraphStore, Row, StoreHealth
from app.store.cypher_library import CypherLibrary


def to_plain(value: Any) -> Any:
    """Convert FalkorDB result values into plain Python values."""
    if isinstance(value, Node | Edge):
        return {k: to_plain(v) for k, v in value.properties.items()}
    if isinstance(value, FalkorPath):
        return {
            "nodes": [to_plain(n) for n in value.nodes()],
            "relationships": [to_plain(e) for e in value.edges()],
        }
    if isinstance(value, dict):
        return {k: to_plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_plain(v) for v in value]
    return value


class FalkorStore(GraphStore):
    """GraphStore on an (embedded or remote) FalkorDB server."""

    backend = "embedded"
    dialect = "falkordb"

    def __init__(
        self,
        library: CypherLibrary,
        host: str,
        port: int,
        graph: str,
        batch_size: int = 2000,
        timeout_s: float = 30.0,
    ) -> None:
        super().__init__(library, batch_size)
        self.host, self.port, self.graph_name = host, port, graph
        self.timeout_ms = int(timeout_s * 1000)
        self._db = FalkorDB(host=host, port=port, socket_timeout=timeout_s + 5, socket_connect_timeout=3)
        self._graph = self._db.select_graph(graph)

    def _execute(self, text: str, params: dict[str, Any], write: bool) -> list[Row]:
        try:
            if write:
                result = self._graph.query(text, params, timeout=self.timeout_ms)
            else:
                result = self._graph.ro_query(text, params, timeout=self.timeout_ms)
        except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError, OSError) as exc:
            raise StoreUnavailable(
                f"FalkorDB at {self.host}:{self.port} is unreachable",
                str(exc),
                "run `neorag db start` (embedded) or check NEORAG_FALKOR_PORT",
            ) from exc
        except redis.exceptions.ResponseError as exc:
            if not write and "empty key" in str(exc):
                # The graph does not exist yet: GRAPH.QUERY creates it empty, so the read answers
                # like Neo4j does (no MATCH rows, but `RETURN 1` and `count(*)` still give a row).
                return self._execute(text, params, write=True)
            raise StatementError("FalkorDB rejected a statement", str(exc)) from exc
        columns = [col[1] if isinstance(col, list | tuple) else col for col in result.header]
        return [dict(zip(columns, (to_plain(v) for v in row), strict=False)) for row in result.result_set]

    def health(self) -> StoreHealth:
        try:
            info = self._db.connection.info("server")
            modules = self._db.connection.execute_command("MODULE", "LIST")
            graph_ver = next(
                (m[m.index("ver") + 1] for m in modules if "graph" in m and "ver" in m), None
            )
            version = f"FalkorDB {graph_ver} (redis {info.get('redis_version')})"
            return StoreHealth(True, self.backend, version)
        except Exception as exc:  # noqa: BLE001 - a probe never raises
            return StoreHealth(False, self.backend, None, f"{type(exc).__name__}: {exc}")

    def capabilities(self) -> Capabilities:
        return Capabilities(extras={"graph": self.graph_name, "port": self.port})

    def drop_graph(self) -> None:
        """Delete this store's whole graph (tests and `--replace-all` use it)."""
        try:
            self._graph.delete()
        except redis.exceptions.ResponseError:
            pass

    def close(self) -> None:
        try:
            self._db.connection.close()
        except Exception:  # noqa: BLE001
            pass
