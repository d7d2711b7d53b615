"""``neorag neo4j dump | load``: the offline backup of Neo4j Community, run for real on the session's Neo4j
(stopped for the dump, restarted after) and loaded into a fresh data dir served by a second Neo4j."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.store.neo4j_server import Neo4jInfo
from ingest.options import IngestOptions
from ingest.pipeline import ingest_path
from tests.conftest import neo4j_for_tests
from tests.support.backends import Backend
from tests.support.graph_dump import canonical_dump, embeddings
from tests.support.ingest_graph import make_services
from tests.test_neo4j_server import error_line, neorag, restart

FIXTURES = Path(__file__).parent / "fixtures" / "ingest"
pytestmark = pytest.mark.backends("neo4j")


def test_dump_stop_load_into_a_fresh_dir_gives_the_same_graph(backend: Backend, neo4j_server: Neo4jInfo,
                                                              graph_name: str, embedder: object,
                                                              tmp_path: Path) -> None:
    backend.claim(graph_name)
    settings = backend.settings(graph_name, data_dir=tmp_path / "nr")
    store = backend.open_store(settings)
    session_dir = str(neo4j_server.data_dir)
    archive = tmp_path / "backups" / "graph.dump"
    try:
        ingest_path(make_services(settings, store, embedder), FIXTURES / "guide.md",  # type: ignore[arg-type]
                    IngestOptions(llm_relations=False, checkpoint=False))
        before, vectors = canonical_dump(store), embeddings(store)
        assert before["nodes"] and before["edges"] and vectors
        probe = next(iter(vectors.values()))
        top = store.run("chunk_vector_search", {"embedding": probe, "k": 3})
        # Community dumps a stopped database only: a running one is refused with the command to run
        refused = error_line(neorag("neo4j", "dump", str(archive), "--data-dir", session_dir))
        assert "is running" in refused and f"neorag neo4j stop --data-dir {session_dir}" in refused
        assert neorag("neo4j", "stop", "--data-dir", session_dir).returncode == 0
        try:
            done = neorag("neo4j", "dump", str(archive), "--data-dir", session_dir)
            assert done.returncode == 0, done.stdout + done.stderr
            assert "dump written" in done.stdout and archive.stat().st_size > 0
            assert not list(archive.parent.glob(".neorag-dump-*"))  # its work dir is gone
        finally:
            start = restart(neo4j_server)
            assert start.returncode == 0, start.stdout + start.stderr
    finally:
        backend.drop(graph_name)
        store.close()

    fresh = tmp_path / "fresh"
    loaded = neorag("neo4j", "load", str(archive), "--data-dir", str(fresh))
    assert loaded.returncode == 0, loaded.stdout + loaded.stderr
    again = error_line(neorag("neo4j", "load", str(archive), "--data-dir", str(fresh)))
    assert "already holds the database 'neo4j'" in again and "--force" in again
    forced = neorag("neo4j", "load", str(archive), "--data-dir", str(fresh), "--force")
    assert forced.returncode == 0 and "kept in" in forced.stdout, forced.stdout + forced.stderr

    server = neo4j_for_tests(fresh)
    info = server.start(timeout_s=300)
    restored = backend.open_store(settings.model_copy(update={"neo4j_uri": info.uri}))
    try:
        assert canonical_dump(restored) == before
        assert embeddings(restored) == vectors
        assert restored.run("chunk_vector_search", {"embedding": probe, "k": 3}) == top  # indexes came too
    finally:
        restored.close()
        server.stop()


def test_dump_and_load_refusals_are_one_line(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    nothing = error_line(neorag("neo4j", "dump", str(tmp_path / "x.dump"), "--data-dir", str(empty)))
    assert "holds no database 'neo4j'" in nothing
    junk = tmp_path / "junk.dump"
    junk.write_bytes(b"not a dump")
    assert "is not a Neo4j dump" in error_line(neorag("neo4j", "load", str(junk), "--data-dir", str(empty)))
    missing = error_line(neorag("neo4j", "load", str(tmp_path / "nope.dump"), "--data-dir", str(empty)))
    assert "cannot read" in missing
    for args in (("backup", str(tmp_path / "b.rdb")), ("restore", str(junk))):
        wrong = error_line(neorag("db", *args, NEORAG_BACKEND="neo4j"))
        assert "NEORAG_BACKEND=neo4j" in wrong and "neorag neo4j " in wrong
