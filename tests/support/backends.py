"""Both graph backends behind one small interface, so one test body runs on FalkorDB and on Neo4j.

FalkorDB gives every test its own graph (a graph name). Neo4j Community has one user database, so a
"graph" there is a claim on that database: claiming another graph name clears it (data, and any index or
constraint the standard schema does not have), and a module's shared graph registered with
:meth:`Backend.shared_graph` is rebuilt when a test of that module runs after the database was claimed
by someone else. See tests/conftest.py for how tests use it.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol

import pytest

from app.core.config import Settings
from app.store.base import GraphStore
from app.store.cypher_library import CypherLibrary
from app.store.embedded import EmbeddedServer, ServerInfo, free_port
from app.store.factory import make_store
from app.store.neo4j_server import Neo4jInfo
from tests.support.tcp_proxy import TcpProxy

NEO4J_TEST_PASSWORD = "neorag-test-password"
STANDARD_DIM = 384


class Switch(Protocol):
    """Something a test can take down and bring back (a store outage)."""

    def stop(self) -> Any: ...

    def start(self) -> Any: ...


class Backend:
    """One backend of the test session (see the module docstring)."""

    name = "abstract"  # the pytest parameter id: "falkordb" or "neo4j"
    version_prefix = ""  # how /diagnostics' store version starts
    down_hint = ""  # a fragment of the /health hint when the store is down

    def __init__(self) -> None:
        self._shared: dict[tuple[str, str], str] = {}
        self._rebuild: dict[str, Callable[[], object]] = {}

    # -- settings and stores ----------------------------------------------------------------------
    def settings(self, graph: str | None = None, **update: Any) -> Settings:
        """Settings on this backend and graph (no LLM); ``update`` overrides any field."""
        raise NotImplementedError

    def open_store(self, settings: Settings) -> GraphStore:
        """A store for ``settings`` (the caller closes it)."""
        return make_store(settings)

    def env(self, settings: Settings) -> dict[str, str]:
        """NEORAG_* variables that point a CLI (in-process or child) at ``settings``' graph."""
        raise NotImplementedError

    # -- graph ownership --------------------------------------------------------------------------
    def claim(self, graph: str, pristine: bool = False) -> None:
        """Make ``graph`` the one tests see (Neo4j: clear the database when another graph held it;
        ``pristine`` also drops the standard schema)."""

    def drop(self, graph: str) -> None:
        """Delete ``graph``'s data."""

    @contextmanager
    def shared_graph(self, request: pytest.FixtureRequest, settings: Settings,
                     build: Callable[[], object]) -> Iterator[Settings]:
        """A module fixture's graph: ``build`` fills it now, and again whenever a test of the module
        needs it after another test claimed the database (tests/conftest.py's ``_claim_shared_graphs``)."""
        key = (request.module.__name__, request.fixturename)
        self._shared[key] = settings.graph_name
        self._rebuild[settings.graph_name] = build
        self.claim(settings.graph_name, pristine=False)
        build()
        try:
            yield settings
        finally:
            self._shared.pop(key, None)
            self._rebuild.pop(settings.graph_name, None)
            self.drop(settings.graph_name)

    def shared_graph_of(self, module: str, fixture: str) -> str | None:
        """The graph a module fixture registered with :meth:`shared_graph`, if any."""
        return self._shared.get((module, fixture))

    @contextmanager
    def stoppable(self, tmp_path: Path, settings: Settings | None = None, keep_data: bool = False,
                  pristine: bool = False) -> Iterator[tuple[Switch, Settings]]:
        """``settings`` (default: a fresh graph's) moved onto a store this test may take down
        (``switch.stop()``) and bring back (``switch.start()``). ``keep_data``: Neo4j keeps what the
        database holds (an outage test of a module's shared graph); ``pristine``: no schema either."""
        raise NotImplementedError
        yield  # pragma: no cover


class FalkorBackend(Backend):
    """The embedded FalkorDB of the session: one graph per name."""

    name, version_prefix, down_hint = "falkordb", "FalkorDB", "neorag db start"

    def __init__(self, server: ServerInfo) -> None:
        super().__init__()
        self.server = server

    def settings(self, graph: str | None = None, **update: Any) -> Settings:
        base = Settings(backend="embedded", falkor_data_dir=self.server.data_dir,
                        falkor_port=self.server.port, graph_name=graph or f"t_{uuid.uuid4().hex[:12]}",
                        llm_base_url=None)
        return base.model_copy(update=update) if update else base

    def env(self, settings: Settings) -> dict[str, str]:
        return {"NEORAG_BACKEND": "embedded", "NEORAG_DATA_DIR": str(settings.data_dir),
                "NEORAG_FALKOR_DATA_DIR": str(settings.falkor_data_dir),
                "NEORAG_FALKOR_PORT": str(settings.falkor_port), "NEORAG_GRAPH_NAME": settings.graph_name}

    def drop(self, graph: str) -> None:
        from app.store.falkor import FalkorStore

        library = CypherLibrary(Settings().cypher_dir, "falkordb")
        store = FalkorStore(library, "127.0.0.1", self.server.port, graph)
        try:
            store.drop_graph()
        finally:
            store.close()

    @contextmanager
    def stoppable(self, tmp_path: Path, settings: Settings | None = None, keep_data: bool = False,
                  pristine: bool = False) -> Iterator[tuple[Switch, Settings]]:
        """A FalkorDB server of the test's own (empty)."""
        port = free_port()
        server = EmbeddedServer(tmp_path / "db", port=port)
        server.start()
        base = settings or self.settings("g")
        try:
            yield server, base.model_copy(update={"falkor_data_dir": tmp_path / "db", "falkor_port": port})
        finally:
            server.stop()


class Neo4jBackend(Backend):
    """The managed Neo4j of the session: one database, claimed by one graph name at a time."""

    name, version_prefix, down_hint = "neo4j", "Neo4j", "neorag neo4j start"

    def __init__(self, info: Neo4jInfo, password: str = NEO4J_TEST_PASSWORD) -> None:
        super().__init__()
        self.info, self.password = info, password
        self.owner: str | None = None
        self.admin = make_store(self.settings("admin"))
        self.standard_schema: set[tuple[Any, ...]] | None = None

    def settings(self, graph: str | None = None, **update: Any) -> Settings:
        base = Settings(backend="neo4j", neo4j_uri=self.info.uri, neo4j_user="neo4j",
                        neo4j_password=self.password, graph_name=graph or f"t_{uuid.uuid4().hex[:12]}",
                        llm_base_url=None)
        return base.model_copy(update=update) if update else base

    def env(self, settings: Settings) -> dict[str, str]:
        return {"NEORAG_BACKEND": "neo4j", "NEORAG_DATA_DIR": str(settings.data_dir),
                "NEORAG_NEO4J_URI": settings.neo4j_uri,
                "NEORAG_NEO4J_USER": settings.neo4j_user, "NEORAG_NEO4J_PASSWORD": settings.neo4j_password,
                "NEORAG_GRAPH_NAME": settings.graph_name}

    def claim(self, graph: str, pristine: bool = False) -> None:
        if self.owner == graph and not pristine:
            return
        self.clear(pristine)
        self.owner = graph
        rebuild = self._rebuild.get(graph)
        if rebuild is not None:
            rebuild()

    def drop(self, graph: str) -> None:
        if self.owner == graph:
            self.clear(pristine=False)
            self.owner = None

    def clear(self, pristine: bool) -> None:
        """Delete every node and relationship; drop every index and constraint (``pristine``) or only
        those the standard schema (bootstrap at 384 dimensions) does not have."""
        self.admin.run("graph_clear")
        standard = set() if pristine else self._standard()
        for kind, name, signature in schema_objects(self.admin):
            if signature not in standard:
                self.admin._execute(f"DROP {kind} `{name.replace('`', '``')}` IF EXISTS", {}, True)

    def _standard(self) -> set[tuple[Any, ...]]:
        if self.standard_schema is None:
            self.clear(pristine=True)
            self.admin.bootstrap(STANDARD_DIM)
            self.standard_schema = {sig for _, _, sig in schema_objects(self.admin)}
        return self.standard_schema

    @contextmanager
    def stoppable(self, tmp_path: Path, settings: Settings | None = None, keep_data: bool = False,
                  pristine: bool = False) -> Iterator[tuple[Switch, Settings]]:
        """The session Neo4j behind a TCP proxy: stopping the proxy is the outage."""
        base = settings or self.settings()
        if not keep_data:
            self.claim(base.graph_name, pristine=pristine)
        proxy = TcpProxy(self.info.host, self.info.bolt_port)
        proxy.start()
        try:
            yield proxy, base.model_copy(update={"neo4j_uri": f"bolt://127.0.0.1:{proxy.port}"})
        finally:
            proxy.stop()

    def close(self) -> None:
        self.admin.close()


def schema_objects(store: GraphStore) -> list[tuple[str, str, tuple[Any, ...]]]:
    """(CONSTRAINT | INDEX, name, signature) of every user-made constraint and index (not the built-in
    token lookup indexes); the signature holds kind, labels, properties and vector dimension."""
    out: list[tuple[str, str, tuple[Any, ...]]] = []
    for r in store._execute("SHOW CONSTRAINTS YIELD name, type, labelsOrTypes, properties "
                            "RETURN name, type, labelsOrTypes, properties", {}, False):
        out.append(("CONSTRAINT", r["name"], (r["name"], r["type"], tuple(r["labelsOrTypes"] or ()),
                                              tuple(r["properties"] or ()))))
    for r in store._execute("SHOW INDEXES YIELD name, type, labelsOrTypes, properties, owningConstraint, "
                            "options WHERE type <> 'LOOKUP' AND owningConstraint IS NULL "
                            "RETURN name, type, labelsOrTypes, properties, "
                            "options.indexConfig['vector.dimensions'] AS dim", {}, False):
        out.append(("INDEX", r["name"], (r["name"], r["type"], tuple(r["labelsOrTypes"] or ()),
                                         tuple(r["properties"] or ()), r["dim"])))
    return out
