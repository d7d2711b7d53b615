"""Shared fixtures: every store-backed test runs on BOTH backends, the embedded FalkorDB and a real Neo4j.

How it works
- ``backend`` is a session fixture parametrised ``falkordb`` and ``neo4j`` (the neo4j parameter carries
  ``pytest.mark.neo4j``: ``pytest -m neo4j`` runs the Neo4j half, ``-m "not neo4j"`` the other). Any test
  that uses ``backend`` -- directly or through ``settings``, ``store`` or a module fixture built on them --
  is collected twice, ``test_x[falkordb]`` and ``test_x[neo4j]``; pytest runs all FalkorDB items first.
- The Neo4j is started once per session through NeoRAG's own ``neorag neo4j`` machinery
  (app/store/neo4j_server.py) in a temp dir on free ports. Without Java or Maven the Neo4j half FAILS
  with the reason (never skips). ``TEST_NEO4J=docker`` uses a testcontainers Neo4j instead.
- Isolation: FalkorDB gives each test its own graph; Neo4j Community has one database, which each test
  claims (cleared: data, and indexes/constraints other than the standard schema). See
  tests/support/backends.py.

Writing a test that runs on both backends
- Use ``settings`` (a fresh, empty graph, no LLM), ``store`` (a GraphStore on it) and
  ``tests.support.apps.app_client(settings)`` -- nothing else is needed. Build other settings with
  ``backend.settings(graph, **overrides)`` and stores with ``backend.open_store(settings)``; point a CLI at
  them with ``monkeypatch.setenv`` of each ``backend.env(settings)`` item.
- A store outage: ``with backend.stoppable(tmp_path) as (switch, settings): ... switch.stop()``.
- A graph built once per module: ``with backend.shared_graph(request, settings, build): yield ...`` in a
  module fixture that takes ``request`` and ``backend``; ``build()`` fills it (again when needed).
- Only one graph exists at a time on Neo4j: to compare with a clean rebuild, take the counts first, then
  build the second graph (``backend.claim(other_graph)``).
- A test that needs no index at all yet (e.g. it makes one of another dimension): mark it
  ``@pytest.mark.pristine_schema``.
- Ad-hoc assertions read with ``tests.support.ingest_graph.q(store, cypher)`` (plain Cypher both run).
- A test that only makes sense on FalkorDB: ``@pytest.mark.backends("falkordb")`` (say why).

What runs on one backend only (decision of issue 13, also in the README): the Chromium UI tests
(test_ui_browser, test_ui_graph_browser, test_documents_browser) use ``falkor_server`` directly -- they test
the page, and every endpoint under them runs on both backends in the API tests; a second browser session
per backend would cost minutes of CI for no store coverage. test_embedded_server is FalkorDB's manager;
test_neo4j_server, test_browser_queries and test_backend_parity are Neo4j's (the parity test builds the
FalkorDB side itself). Three modules test something other than the store on FalkorDB only
(``FalkorBackend(falkor_server)``): test_openapi_schemathesis (the HTTP contract; every endpoint under it
runs on both backends in its own tests), test_llm_local_answers (the bundled model's replies; the llm ingest
tier runs on both) and test_evidence_sr (the LLM rewrite of a history; /evidence runs on both).
Everything else that touches a store runs on both.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
# App tests compare rankings with exact fp32 query vectors and should not spend CPU choosing the fast
# query encoder in every app they start; tests/test_query_encoder.py sets "auto" itself.
os.environ.setdefault("NEORAG_EMBEDDING_QUERY_PRECISION", "fp32")
# The LLM extraction cache is a file in the data dir, shared by every test on the session store: off unless a
# test turns it on with a path of its own (tests/test_llm_*.py, tests/test_ingest_llm_cache.py).
os.environ.setdefault("NEORAG_LLM_CACHE_ENABLED", "false")

from app.core.config import Settings  # noqa: E402
from app.core.errors import NeoRAGError  # noqa: E402
from app.store.base import GraphStore  # noqa: E402
from app.store.embedded import EmbeddedServer, ServerInfo, free_port  # noqa: E402
from app.store.neo4j_runtime import Neo4jRuntime  # noqa: E402
from app.store.neo4j_server import Neo4jInfo, Neo4jServer  # noqa: E402
from tests.support.backends import NEO4J_TEST_PASSWORD, Backend, FalkorBackend, Neo4jBackend  # noqa: E402
from tests.support.local_llm import local_llm  # noqa: E402,F401  (session fixture: the bundled model)

FIXTURES = Path(__file__).parent / "fixtures"
BACKENDS = ("falkordb", "neo4j")
# The test Neo4j's JVM: small, the machine is shared (a 2-core CI runner runs the whole suite); the C1
# compiler only: about half the CPU to start, and the tests' small queries do not need C2's peak speed.
TEST_NEO4J_HEAP, TEST_NEO4J_PAGECACHE = "768m", "256m"
TEST_NEO4J_JVM_FLAGS = ("-XX:TieredStopAtLevel=1",)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "backends(*names): run this test only on these backends "
                                       "(falkordb, neo4j); default both")
    config.addinivalue_line("markers", "pristine_schema: the test's Neo4j database starts without any "
                                       "index or constraint (as a fresh FalkorDB graph does)")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Parametrise ``backend`` for every test that uses it (see the module docstring)."""
    if "backend" not in metafunc.fixturenames:
        return
    marker = metafunc.definition.get_closest_marker("backends")
    names = marker.args if marker else BACKENDS
    unknown = set(names) - set(BACKENDS)
    if unknown:
        raise pytest.UsageError(f"unknown backends {sorted(unknown)} on {metafunc.definition.nodeid}")
    params = [pytest.param(n, marks=pytest.mark.neo4j, id=n) if n == "neo4j" else pytest.param(n, id=n)
              for n in BACKENDS if n in names]
    metafunc.parametrize("backend", params, indirect=True, scope="session")


@pytest.fixture(scope="session")
def falkor_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerInfo]:
    """A real embedded FalkorDB started through NeoRAG's own manager."""
    server = EmbeddedServer(tmp_path_factory.mktemp("falkordb"))
    info = server.start()
    yield info
    server.stop()


def neo4j_for_tests(data_dir: Path) -> Neo4jServer:
    """A Neo4j for tests on ``data_dir``: free ports, the test password, a small C1-only JVM."""
    settings = Settings()
    return Neo4jServer(data_dir, Neo4jRuntime(settings.neo4j_cache_dir, java=settings.neo4j_java),
                       bolt_port=free_port(), http_port=free_port(), password=NEO4J_TEST_PASSWORD,
                       heap=TEST_NEO4J_HEAP, pagecache=TEST_NEO4J_PAGECACHE, jvm_flags=TEST_NEO4J_JVM_FLAGS)


@pytest.fixture(scope="session")
def neo4j_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Neo4jInfo]:
    """A real Neo4j Community started through ``neorag neo4j``'s machinery (fails, never skips,
    without Java/Maven). ``TEST_NEO4J=docker``: a testcontainers Neo4j instead."""
    if os.environ.get("TEST_NEO4J") == "docker":
        yield from _docker_neo4j()
        return
    server = neo4j_for_tests(tmp_path_factory.mktemp("neo4j"))
    try:
        info = server.start(timeout_s=300)
    except NeoRAGError as exc:
        pytest.fail(f"the Neo4j half of the tests needs a local Neo4j (Java 17 + Maven, see "
                    f"scripts/test-tools.sh): {exc}", pytrace=False)
    yield info
    server.stop()


def _docker_neo4j() -> Iterator[Neo4jInfo]:
    from testcontainers.neo4j import Neo4jContainer

    with Neo4jContainer("neo4j:5.26-community", password=NEO4J_TEST_PASSWORD) as container:
        host, port = container.get_container_host_ip(), int(container.get_exposed_port(7687))
        yield Neo4jInfo(0, host, port, 0, "docker", Path("."), False)


@pytest.fixture(scope="session")
def backend(request: pytest.FixtureRequest) -> Iterator[Backend]:
    """The backend of this test: ``falkordb`` or ``neo4j`` (parametrised by pytest_generate_tests)."""
    if request.param == "neo4j":
        neo = Neo4jBackend(request.getfixturevalue("neo4j_server"))
        yield neo
        neo.close()
        return
    yield FalkorBackend(request.getfixturevalue("falkor_server"))


@pytest.fixture(autouse=True)
def _claim_shared_graphs(request: pytest.FixtureRequest) -> None:
    """Before each test: a module graph (Backend.shared_graph) the test uses holds the database."""
    if "backend" not in request.fixturenames:
        return
    backend: Backend = request.getfixturevalue("backend")
    for name in request.fixturenames:
        graph = backend.shared_graph_of(request.module.__name__, name)
        if graph is not None:
            backend.claim(graph)


@pytest.fixture
def graph_name() -> str:
    """A graph name unique to this test."""
    return f"t_{uuid.uuid4().hex[:12]}"


@pytest.fixture
def settings(request: pytest.FixtureRequest, backend: Backend, graph_name: str, tmp_path: Path) -> Settings:
    """Settings on this test's backend and its own empty graph (no LLM), with a data dir of its own
    (checkpoints, uploads). On Neo4j the standard indexes may remain from an earlier test (bootstrap is
    idempotent); ``@pytest.mark.pristine_schema`` drops them too (a test that makes an index of another
    dimension, or checks what bootstrap creates)."""
    backend.claim(graph_name, pristine=request.node.get_closest_marker("pristine_schema") is not None)
    data = tmp_path / ".neorag"
    return backend.settings(graph_name, data_dir=data, uploads_dir=data / "uploads")


@pytest.fixture
def store(settings: Settings, backend: Backend) -> Iterator[GraphStore]:
    """A GraphStore on this test's own graph (dropped afterwards)."""
    s = backend.open_store(settings)
    yield s
    backend.drop(settings.graph_name)
    s.close()


@pytest.fixture(scope="session")
def embedder():  # type: ignore[no-untyped-def]
    """The real offline all-MiniLM-L6-v2 embedder (loaded once)."""
    from app.services.embedder_choice import shared_embedder

    return shared_embedder()


@pytest.fixture(scope="module")
def browser():  # type: ignore[no-untyped-def]
    """One headless Chromium per page-test module (tests/browser/); fails, never skips, without Chromium."""
    from tests.browser.fixtures import started_browser

    yield from started_browser()
