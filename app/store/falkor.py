"""FalkorDB adapter over the native ``falkordb`` client (redis protocol)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

import redis
from falkordb import FalkorDB
from falkordb.edge import Edge
from falkordb.graph import Graph
from falkordb.helpers import stringify_param_value
from falkordb.node import Node
from falkordb.path import Path as FalkorPath

from app.core.errors import StatementError, StoreUnavailable
from app.store.base import Capabilities, GraphStore, Prepared, Row, StoreHealth
from app.store.cypher_library import CypherLibrary

_SCALARS = (float, int, str, bool, type(None))


def to_plain(value: Any) -> Any:
    """Convert FalkorDB result values into plain Python values."""
    kind = type(value)
    if kind in _SCALARS:
        return value
    if kind is list and value and type(value[0]) is float and all(type(v) is float for v in value):
        return value  # a vector: already plain (spares a call per number when vectors are read)
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


_float_list = json.JSONEncoder(separators=(",", ":"), allow_nan=False).encode


def cypher_literal(value: Any) -> str:
    """A parameter value as FalkorDB's ``CYPHER name=<literal>`` header expects it.

    Same text as ``falkordb.helpers.stringify_param_value``, faster on big batches: lists of floats
    (embeddings) are encoded in C by ``json``; anything unusual falls back to the client's encoder.
    """
    kind = type(value)
    if kind is str:
        if "\\" in value or '"' in value:
            value = value.replace("\\", "\\\\").replace('"', '\\"')
        return '"' + value + '"'
    if kind is int or kind is float:
        return repr(value)
    if kind is dict:
        parts = []
        for key, item in value.items():
            key = str(key)
            if not key or "`" in key:
                return stringify_param_value(value)  # raises its own clear error
            parts.append("`" + key + "`:" + cypher_literal(item))
        return "{" + ",".join(parts) + "}"
    if kind is list or kind is tuple:
        if value and type(value[0]) is float and all(type(x) is float for x in value):
            try:
                return _float_list(value)
            except ValueError:  # NaN / infinity
                pass
        return "[" + ",".join([cypher_literal(item) for item in value]) + "]"
    if value is None:
        return "null"
    return str(stringify_param_value(value))


def params_header(params: dict[str, Any]) -> str:
    """``CYPHER a=... b=... `` for ``params`` (empty when there are none)."""
    if not params:
        return ""
    return "CYPHER " + "".join(f"`{k}`={cypher_literal(v)} " for k, v in params.items())


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
        reconnect_wait_s: float = 0.0,
        locate: Callable[[], int | None] | None = None,
    ) -> None:
        """``reconnect_wait_s``: how long a statement waits for a store that went away (restarting) before
        StoreUnavailable; ``locate``: the store's current port (the embedded server may move)."""
        super().__init__(library, batch_size)
        self.host, self.port, self.graph_name = host, port, graph
        self.reconnect_wait_s, self._locate = reconnect_wait_s, locate
        self.timeout_ms = int(timeout_s * 1000)
        self._socket_timeout = timeout_s + 5
        self._conn: FalkorDB | None = None
        self._graph_handle: Graph | None = None
        try:
            self._connect()
        except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError, OSError):
            pass  # a store that is down at start is connected on first use (health reports it meanwhile)

    def _connect(self) -> FalkorDB:
        if self._conn is None:
            db = FalkorDB(host=self.host, port=self.port, socket_timeout=self._socket_timeout,
                          socket_connect_timeout=3)
            self._graph_handle = db.select_graph(self.graph_name)
            self._conn = db
        return self._conn

    @property
    def _db(self) -> FalkorDB:
        """The client, connected on first use."""
        return self._connect()

    @property
    def _graph(self) -> Graph:
        self._connect()
        assert self._graph_handle is not None
        return self._graph_handle

    def prepare(self, name: str, params: dict[str, Any] | None = None) -> Prepared:
        """Encodes the parameters into FalkorDB's ``CYPHER name=value`` header now (the costly part)."""
        stmt = self.library.get(name)
        return Prepared(name, params_header(params or {}) + stmt.text, {}, stmt.is_write)

    def _reconnect(self) -> None:
        """Follow the server to its current port when it moved (same port: the client's pool reconnects
        by itself on the next command)."""
        port = self._locate() if self._locate else None
        if port and port != self.port:
            self.close()
            self._conn, self._graph_handle = None, None
            self.port = port

    def _send(self, query: str, write: bool) -> Any:
        """Send one query; while the store is away (restarting) retry for up to ``reconnect_wait_s``:
        reads always, writes only when the connection failed before anything was sent."""
        deadline = time.monotonic() + self.reconnect_wait_s
        while True:
            try:
                if write:
                    return self._graph.query(query, None, timeout=self.timeout_ms)
                return self._graph.ro_query(query, None, timeout=self.timeout_ms)
            except (redis.exceptions.ConnectionError, OSError) as exc:
                unsent = "connecting to" in str(exc) or isinstance(exc, ConnectionRefusedError)
                if time.monotonic() >= deadline or (write and not unsent):
                    raise
                time.sleep(0.2)
                self._reconnect()

    def _execute(self, text: str, params: dict[str, Any], write: bool) -> list[Row]:
        try:
            query = params_header(params) + text  # built here: the client's encoder is slow on big batches
            result = self._send(query, write)
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
            try:
                info = self._db.connection.info("server")
            except (redis.exceptions.ConnectionError, OSError):
                self._reconnect()  # the server came back on another port, or the client is stale
                info = self._db.connection.info("server")
            modules = self._db.connection.execute_command("MODULE", "LIST")
            graph_ver = next(
                (m[m.index("ver") + 1] for m in modules if "graph" in m and "ver" in m), None
            )
            if isinstance(graph_ver, int):  # 41603 -> 4.16.3
                graph_ver = f"{graph_ver // 10000}.{graph_ver // 100 % 100}.{graph_ver % 100}"
            version = f"FalkorDB {graph_ver} (redis {info.get('redis_version')})"
            return StoreHealth(True, self.backend, version)
        except Exception as exc:  # noqa: BLE001 - a probe never raises
            return StoreHealth(False, self.backend, None, f"{type(exc).__name__}: {exc}")

    def capabilities(self) -> Capabilities:
        return Capabilities(vector_index_rebuilt_at_load=True,  # HNSW, rebuilt from the vectors at load
                            extras={"graph": self.graph_name, "port": self.port})

    def drop_graph(self) -> None:
        """Delete this store's whole graph (tests and `--replace-all` use it)."""
        try:
            self._graph.delete()
        except redis.exceptions.ResponseError:
            pass

    def close(self) -> None:
        if self._conn is None:
            return
        try:
            self._conn.connection.close()
        except Exception:  # noqa: BLE001
            pass
