"""One conformance suite for every GraphStore adapter.

Runs on both backends of tests/conftest.py: the embedded FalkorDB (each test on its own graph) and the
session's real Neo4j 5.26 Community (one database, cleared with its whole schema before each test).
Only production statements from cypher/.
"""

from __future__ import annotations

import math
import random
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from app.store.base import GraphStore
from app.store.cypher_library import CypherLibrary
from app.store.embedded import ServerInfo
from app.store.falkor import FalkorStore
from tests.support.backends import Backend

DIM = 384
_BUSY_STATES = ("POPULATING", "UNDER CONSTRUCTION", "PENDING")


@pytest.fixture
def any_store(backend: Backend, graph_name: str) -> Iterator[GraphStore]:
    """A store with an empty graph of its own (on Neo4j the standard schema may remain from earlier tests:
    bootstrap is idempotent), keeping the store's own vector index (``retrieval_vector_backend=store``:
    this suite checks the adapters' statements; tests/test_vector_index.py checks the in-process one)."""
    backend.claim(graph_name)
    store = backend.open_store(backend.settings(graph_name, retrieval_vector_backend="store"))
    yield store
    backend.drop(graph_name)
    store.close()


@pytest.fixture
def unbootstrapped(backend: Backend, graph_name: str, any_store: GraphStore) -> GraphStore:
    """``any_store`` without any index or constraint yet."""
    backend.claim(graph_name, pristine=True)
    return any_store


def wait_for_indexes(store: GraphStore, timeout_s: float = 60.0) -> list[dict[str, Any]]:
    """Poll index_state until no index is still populating; returns the final rows."""
    deadline = time.monotonic() + timeout_s
    rows = store.run("index_state")
    while any(str(r["state"]).upper() in _BUSY_STATES for r in rows) and time.monotonic() < deadline:
        time.sleep(0.2)
        rows = store.run("index_state")
    return rows


@pytest.fixture
def ready(any_store: GraphStore) -> GraphStore:
    """``any_store`` with schema v1 in place (vector index of DIM dimensions)."""
    any_store.bootstrap(DIM)
    wait_for_indexes(any_store)
    return any_store


def unit(i: int, sign: float = 1.0) -> list[float]:
    """The i-th basis vector of DIM dimensions, times ``sign``."""
    vec = [0.0] * DIM
    vec[i] = sign
    return vec


def add_chunks(store: GraphStore, chunks: list[dict[str, Any]], doc_id: str = "doc-1") -> None:
    """One Document plus ``chunks`` ({id, text, ...}); embeddings set when a chunk has one."""
    store.run_batched("document_upsert", [{"id": doc_id, "title": "T", "source": "s.txt", "props": {}}])
    store.run_batched("chunk_upsert", [
        {"id": c["id"], "doc_id": doc_id, "text": c["text"], "hash": c.get("hash", "h"),
         "source": c.get("source", "s.txt"), "seq": i} for i, c in enumerate(chunks)])
    vectors = [{"id": c["id"], "embedding": c["embedding"]} for c in chunks if "embedding" in c]
    if vectors:
        store.run_batched("chunk_set_embeddings", vectors)


def counts(store: GraphStore) -> tuple[dict[str, int], dict[str, int]]:
    nodes = {r["label"]: r["count"] for r in store.run("count_nodes_by_label")}
    rels = {r["type"]: r["count"] for r in store.run("count_rels_by_type")}
    return nodes, rels


# --- health, bootstrap -------------------------------------------------------------------------

def test_health_reports_reachable_and_version(any_store: GraphStore) -> None:
    health = any_store.health()
    assert health.reachable is True
    assert health.version and re.match(r"(FalkorDB|Neo4j) \d+\.\d+", health.version), health.version
    assert any_store.run("ping") == [{"ok": 1}]  # even before the graph has any node
    assert counts(any_store) == ({}, {})
    caps = any_store.capabilities()
    assert caps.vector_index and caps.fulltext_index
    assert "(1 + cos) / 2" in caps.vector_scale


def test_bootstrap_is_idempotent(unbootstrapped: GraphStore) -> None:
    any_store = unbootstrapped
    first = any_store.bootstrap(DIM)
    assert "ddl_80_chunk_vector" in first and "ddl_90_chunk_fulltext" in first
    before = sorted((r["label"], r["property"], r["type"]) for r in wait_for_indexes(any_store))
    any_store.bootstrap(DIM)  # must not raise
    after_rows = wait_for_indexes(any_store)
    after = sorted((r["label"], r["property"], r["type"]) for r in after_rows)
    assert before == after
    kinds = {(r["label"], r["property"]): r for r in after_rows}
    assert str(kinds[("Chunk", "embedding")]["type"]).upper() == "VECTOR"
    assert kinds[("Chunk", "embedding")]["dimension"] == DIM
    assert str(kinds[("Chunk", "text")]["type"]).upper() == "FULLTEXT"
    assert {("Chunk", "id"), ("Document", "id"), ("Entity", "id"), ("Entity", "norm")} <= set(kinds)


# --- writes and reads --------------------------------------------------------------------------

def test_run_batched_sends_batches_and_writes_every_row(ready: GraphStore) -> None:
    rows = [{"id": f"d{i}", "title": f"Doc {i}", "source": f"{i}.txt", "props": {"n": i}} for i in range(7)]
    before = ready.round_trips
    sent = ready.run_batched("document_upsert", rows, batch_size=3)
    assert sent == 7
    assert ready.round_trips - before == math.ceil(7 / 3)
    assert counts(ready)[0] == {"Document": 7}


def test_named_reads_return_plain_rows(ready: GraphStore) -> None:
    add_chunks(ready, [{"id": "c1", "text": "alpha"}, {"id": "c2", "text": "beta"},
                       {"id": "c3", "text": "gamma"}])
    rows = ready.run("chunk_get_by_ids", {"ids": ["c3", "c1", "missing"]})
    keys = ("id", "text", "source", "seq", "hash", "doc_id")
    assert sorted(({k: r[k] for k in keys} for r in rows), key=lambda r: r["id"]) == [
        {"id": "c1", "text": "alpha", "source": "s.txt", "seq": 0, "hash": "h", "doc_id": "doc-1"},
        {"id": "c3", "text": "gamma", "source": "s.txt", "seq": 2, "hash": "h", "doc_id": "doc-1"},
    ]
    nodes, rels = counts(ready)
    assert nodes == {"Chunk": 3, "Document": 1}
    assert rels == {"HAS_CHUNK": 3}


def test_prepared_statements_run_like_named_ones(ready: GraphStore) -> None:
    add_chunks(ready, [{"id": "c1", "text": 'say "hi" \\ ünï'}, {"id": "c2", "text": "beta"}])
    prepared = ready.prepare("chunk_get_by_ids", {"ids": ["c1", "c2"]})  # e.g. on a loader's main thread
    before = ready.round_trips
    assert ready.run_prepared(prepared) == ready.run("chunk_get_by_ids", {"ids": ["c1", "c2"]})
    assert ready.round_trips - before == 2
    assert prepared.name == "chunk_get_by_ids" and prepared.write is False
    texts = sorted(r["text"] for r in ready.run_prepared(prepared))
    assert texts == ["beta", 'say "hi" \\ ünï']


def test_merge_is_idempotent(ready: GraphStore) -> None:
    chunks = [{"id": "c1", "text": "one"}, {"id": "c2", "text": "two"}]
    add_chunks(ready, chunks)
    add_chunks(ready, chunks)
    ready.run_batched("document_upsert", [{"id": "doc-1", "title": "Renamed", "source": "s.txt",
                                           "props": {"lang": "en"}}])
    assert counts(ready) == ({"Chunk": 2, "Document": 1}, {"HAS_CHUNK": 2})
    assert {r["id"] for r in ready.run("chunk_get_by_ids", {"ids": ["c1", "c2"]})} == {"c1", "c2"}


TRICKY = [
    "it's \"quoted\" and 'single'",
    "back\\slash \\n not-a-newline \\\\ double",
    "real\nnewline\ttab",
    "Ünïcödé naïve café – “curly” ‘quotes’ ß",
    "中文字符 日本語のテキスト 한국어",
    "emoji 🚀🧪 👩‍🔬 flags 🇫🇷",
    "$param {braces} // comment ; MATCH (n) DETACH DELETE n RETURN 1",
    "",
]


def test_parameters_with_quotes_and_unicode_round_trip(ready: GraphStore) -> None:
    chunks = [{"id": f"c-{i}-ü中🚀", "text": text, "source": f"dir/{text[:8]}.txt", "hash": text[::-1]}
              for i, text in enumerate(TRICKY)]
    add_chunks(ready, chunks, doc_id="doc-'\"\\-ü")
    rows = ready.run("chunk_get_by_ids", {"ids": [c["id"] for c in chunks]})
    got = {r["id"]: r for r in rows}
    assert set(got) == {c["id"] for c in chunks}
    for c in chunks:
        assert got[c["id"]]["text"] == c["text"]
        assert got[c["id"]]["source"] == c["source"]
        assert got[c["id"]]["hash"] == c["hash"]
        assert got[c["id"]]["doc_id"] == "doc-'\"\\-ü"
    assert counts(ready)[0] == {"Chunk": len(TRICKY), "Document": 1}


# --- score scales ------------------------------------------------------------------------------

def test_vector_scores_are_one_plus_cos_over_two(ready: GraphStore) -> None:
    add_chunks(ready, [
        {"id": "same", "text": "same", "embedding": unit(0)},
        {"id": "orthogonal", "text": "orthogonal", "embedding": unit(1)},
        {"id": "opposite", "text": "opposite", "embedding": unit(0, -1.0)},
    ])
    rows = ready.run("chunk_vector_search", {"embedding": unit(0), "k": 3})
    scores = {r["id"]: r["score"] for r in rows}
    assert [r["id"] for r in rows] == ["same", "orthogonal", "opposite"]
    assert scores["same"] == pytest.approx(1.0, abs=1e-4)
    assert scores["orthogonal"] == pytest.approx(0.5, abs=1e-4)
    assert scores["opposite"] == pytest.approx(0.0, abs=1e-4)
    assert all(0.0 <= s <= 1.0 for s in scores.values())
    assert set(rows[0]) == {"id", "text", "source", "seq", "score"}


def test_fulltext_scores_are_max_normalised(ready: GraphStore) -> None:
    add_chunks(ready, [
        {"id": "both", "text": "Graph databases store nodes and relationships; graph databases scale."},
        {"id": "one", "text": "A graph is a set of vertices and edges studied in mathematics."},
        {"id": "none", "text": "Cooking pasta with tomato sauce and basil."},
    ])
    rows = ready.run("chunk_fulltext_search", {"terms": ["graph", "databases"], "k": 10})
    ids = [r["id"] for r in rows]
    assert ids[0] == "both"
    assert "one" in ids and "none" not in ids
    assert rows[0]["score"] == pytest.approx(1.0)
    assert all(0.0 < r["score"] <= 1.0 for r in rows)
    assert [r["score"] for r in rows] == sorted((r["score"] for r in rows), reverse=True)


def test_5000_row_batch_with_384_float_vectors(ready: GraphStore) -> None:
    rng = random.Random(7)
    n, chosen = 5000, 3217
    vectors = [[rng.uniform(-1.0, 1.0) for _ in range(DIM)] for _ in range(n)]
    chunks = [{"id": f"c{i:05d}", "text": f"chunk number {i}", "embedding": vectors[i]} for i in range(n)]
    before = ready.round_trips
    add_chunks(ready, chunks)
    batch = ready.batch_size
    assert ready.round_trips - before == 1 + 2 * math.ceil(n / batch)
    assert counts(ready)[0] == {"Chunk": n, "Document": 1}
    rows = ready.run("chunk_vector_search", {"embedding": vectors[chosen], "k": 5})
    assert rows[0]["id"] == f"c{chosen:05d}"
    assert rows[0]["score"] == pytest.approx(1.0, abs=1e-4)
    assert len(rows) == 5 and all(0.0 <= r["score"] <= 1.0 for r in rows)
    sample = ready.run("chunk_embedding_by_id", {"id": f"c{chosen:05d}"})[0]["embedding"]
    assert len(sample) == DIM
    assert sample == pytest.approx(vectors[chosen], abs=1e-6)


# --- the statement loader ----------------------------------------------------------------------

def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_missing_statement_names_the_files(tmp_path: Path, any_store: GraphStore) -> None:
    from app.core.errors import StatementError

    lib = CypherLibrary(tmp_path, any_store.dialect)
    with pytest.raises(StatementError) as err:
        lib.require(["no_such_statement"])
    assert str(tmp_path / "no_such_statement.cypher") in str(err.value)
    assert str(tmp_path / any_store.dialect / "no_such_statement.cypher") in str(err.value)
    with pytest.raises(StatementError, match="no_such_statement"):
        any_store.run("no_such_statement")


def test_file_without_header_comment_is_rejected(tmp_path: Path) -> None:
    from app.core.errors import StatementError

    bad = _write(tmp_path / "falkordb" / "headless.cypher", "MATCH (n) RETURN n\n")
    with pytest.raises(StatementError) as err:
        CypherLibrary(tmp_path, "falkordb")
    assert str(bad) in str(err.value) and "header" in str(err.value)
    CypherLibrary(tmp_path, "neo4j")  # the other dialect never loads that file


def test_dialect_override_beats_shared_file(tmp_path: Path) -> None:
    _write(tmp_path / "pick.cypher", "// Shared. Params: none.\nRETURN 'shared' AS v\n")
    _write(tmp_path / "neo4j" / "pick.cypher", "// Neo4j. Params: none.\nRETURN 'neo4j' AS v\n")
    _write(tmp_path / "only_shared.cypher", "// Shared only. Params: $x.\nMERGE (n:X {id: $x})\n")
    neo, falkor = CypherLibrary(tmp_path, "neo4j"), CypherLibrary(tmp_path, "falkordb")
    assert "'neo4j'" in neo.get("pick").text and neo.get("pick").path == tmp_path / "neo4j" / "pick.cypher"
    assert "'shared'" in falkor.get("pick").text
    assert neo.get("only_shared").is_write and not neo.get("pick").is_write
    assert neo.get("only_shared").parameters == {"x"}
    assert neo.get("pick").header == "Neo4j. Params: none."


def test_dialect_override_is_what_the_store_runs(tmp_path: Path, falkor_server: ServerInfo,
                                                graph_name: str) -> None:
    _write(tmp_path / "pick.cypher", "// Shared. Params: none.\nRETURN 'shared' AS v\n")
    _write(tmp_path / "falkordb" / "pick.cypher", "// FalkorDB. Params: none.\nRETURN 'falkordb' AS v\n")
    store = FalkorStore(CypherLibrary(tmp_path, "falkordb"), "127.0.0.1", falkor_server.port, graph_name)
    try:
        assert store.run("pick") == [{"v": "falkordb"}]
    finally:
        store.drop_graph()
        store.close()


def test_falkor_parameter_encoding_matches_the_client() -> None:
    from falkordb.helpers import stringify_param_value

    from app.store.falkor import cypher_literal, params_header

    values: list[Any] = [*TRICKY, 0, -3, 2.5, 1e-30, True, False, None, [], {}, [0.25, -1.0, 3.0],
                         [1, "a", None, [2.0, 3.0]], {"k": [0.5, 1.5], "s": 'x"\\y', "n": {"m": None}},
                         [float("nan"), 1.0]]
    for value in values:
        assert cypher_literal(value) == stringify_param_value(value)
    assert params_header({}) == ""
    assert params_header({"rows": [{"id": "a"}], "k": 3}) == 'CYPHER `rows`=[{`id`:"a"}] `k`=3 '
