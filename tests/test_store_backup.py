"""`neorag db backup` / `db restore` of the embedded store: a round trip gives the same graph; restore
refuses a running or non-empty store unless forced; a bad file is refused; the old store is warned of."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from app.commands.db import legacy_store_warning
from app.core.config import REPO_ROOT, Settings
from app.core.errors import BadInput, StoreUnavailable
from app.store.backup import backup, restore
from app.store.cypher_library import CypherLibrary
from app.store.embedded import EmbeddedServer, has_data
from app.store.falkor import FalkorStore
from ingest.load import scan
from ingest.options import IngestOptions
from ingest.pipeline import ingest_path
from tests.support.graph_dump import canonical_dump, embeddings
from tests.support.ingest_graph import make_services

FIXTURES = Path(__file__).parent / "fixtures" / "ingest"
NEORAG = str(Path(sys.executable).parent / "neorag")
LIB = CypherLibrary(REPO_ROOT / "cypher", "falkordb")


def _store(server: EmbeddedServer) -> FalkorStore:
    info = server.status()
    assert info is not None
    return FalkorStore(LIB, "127.0.0.1", info.port, "g")


def _stopped_store_with_one_document(data_dir: Path) -> EmbeddedServer:
    """A store under ``data_dir`` holding one Document, stopped (its AOF compacted)."""
    server = EmbeddedServer(data_dir)
    server.start()
    store = _store(server)
    store.run_batched("document_upsert", [{"id": "d1", "title": "T", "source": "t.txt", "props": {}}])
    store.close()
    server.stop()
    return server


def _cli(*args: str, data_dir: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NEORAG_FALKOR_DATA_DIR": str(data_dir), "NEORAG_FALKOR_PORT": "0"}
    return subprocess.run([NEORAG, "db", *args], capture_output=True, text=True, env=env, timeout=120,
                          check=False)


def test_backup_wipe_restore_gives_the_same_graph(tmp_path: Path, embedder: object) -> None:
    source = EmbeddedServer(tmp_path / "live")
    source.start()
    store = _store(source)
    try:
        settings = Settings(falkor_data_dir=source.data_dir, graph_name="g", data_dir=tmp_path / "nr",
                            llm_base_url=None)
        ingest_path(make_services(settings, store, embedder), FIXTURES / "guide.md",  # type: ignore[arg-type]
                    IngestOptions(llm_relations=False, checkpoint=False))
        before, vectors = canonical_dump(store), embeddings(store)
        assert before["nodes"] and before["edges"]
        # a snapshot while serving, through the CLI
        (tmp_path / "b").mkdir()  # the folder must exist: backup never creates one
        done = _cli("backup", "--to", str(tmp_path / "b" / "snap.rdb"), data_dir=source.data_dir)
        assert done.returncode == 0, done.stdout + done.stderr
        assert "backup written" in done.stdout
    finally:
        store.close()
        source.stop()
    assert not list(source.data_dir.glob("dump.rdb"))  # the temporary dump was removed
    fresh = tmp_path / "fresh"
    restored = _cli("restore", str(tmp_path / "b" / "snap.rdb"), data_dir=fresh)  # PATH or --from PATH
    assert restored.returncode == 0, restored.stdout + restored.stderr
    server = EmbeddedServer(fresh)
    server.start()
    store = _store(server)
    try:
        assert canonical_dump(store) == before
        assert embeddings(store) == vectors
        store.run("ping")
    finally:
        store.close()
        server.stop()
    # and it stays restored across a stop/start (the snapshot became the AOF base)
    server.start()
    store = _store(server)
    try:
        assert canonical_dump(store) == before
    finally:
        store.close()
        server.stop()


def test_backup_of_a_stopped_store_and_restore_refusals(tmp_path: Path) -> None:
    server = _stopped_store_with_one_document(tmp_path / "db")
    snap = tmp_path / "snap.rdb"
    assert backup(server, snap) > 0  # started for the snapshot, stopped again
    assert server.status() is None
    # a running store is refused, a non-empty one too
    server.start()
    with pytest.raises(BadInput, match="uses") as running:
        restore(server, snap)
    assert running.value.status == 409
    server.stop()
    with pytest.raises(BadInput, match="already holds a store"):
        restore(server, snap)
    # forced: the old files are kept aside
    kept = restore(server, snap, force=True)
    assert kept is not None and kept.exists() and has_data(server.data_dir)
    bad = tmp_path / "bad.rdb"
    bad.write_text("not a backup")
    with pytest.raises(BadInput, match="not a NeoRAG/FalkorDB backup"):
        restore(EmbeddedServer(tmp_path / "other"), bad)
    cli = _cli("restore", "--from", str(tmp_path / "missing.rdb"), data_dir=tmp_path / "other")
    assert cli.returncode == 2 and "cannot read" in cli.stdout + cli.stderr
    for args in (("backup",), ("restore", str(bad), "--from", str(bad))):  # the file once, not 0 or 2 times
        cli = _cli(*args, data_dir=tmp_path / "other")
        assert cli.returncode == 2 and "give the file once" in cli.stdout + cli.stderr


def test_forced_restore_stops_the_running_server(tmp_path: Path) -> None:
    server = EmbeddedServer(tmp_path / "db")
    server.start()
    snap = tmp_path / "snap.rdb"
    backup(server, snap)
    info = server.status()
    assert info is not None
    restore(server, snap, force=True)
    assert server.status() is None


def test_store_dirs_are_never_scanned_and_old_store_warned(tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "data"
    (root / "docs").mkdir(parents=True)
    (root / "docs" / "a.md").write_text("# A\n\ntext")
    old = root / "falkordb"
    (old / "appendonlydir").mkdir(parents=True)
    (old / "appendonlydir" / "appendonly.aof.1.base.rdb").write_bytes(b"REDIS0011")
    (old / "neorag-falkordb.json").write_text('{"pid": 1, "port": 2}')
    neo = root / "neo4j"  # a `neorag neo4j` data dir: its logs and conf are never documents either
    (neo / "logs").mkdir(parents=True)
    (neo / "logs" / "debug.log.txt").write_text("INFO started")
    (neo / "neorag-neo4j.json").write_text('{"pid": null, "version": "5.26.30"}')
    assert scan(root) == [root / "docs" / "a.md"]
    assert Settings(data_dir=tmp_path / "d").neo4j_data_dir == tmp_path / "d" / "neo4j"
    monkeypatch.chdir(tmp_path)
    text = legacy_store_warning(Settings(data_dir=tmp_path / ".neorag"))
    assert text is not None and "data/falkordb" in text and "mv data/falkordb" in text
    assert legacy_store_warning(Settings(falkor_data_dir=Path("data/falkordb"))) is None


def test_backup_to_a_path_it_cannot_write_is_one_line_and_leaves_nothing(tmp_path: Path) -> None:
    """`neorag db backup /proc/x.rdb` crashed with a traceback and left dump.rdb behind; a missing folder
    was created silently. Now: one line, nothing left over, no folder made (issue 25, item 9)."""
    server = EmbeddedServer(tmp_path / "db")
    server.start()
    try:
        for target, fragment in ((Path("/proc/neorag-backup-test.rdb"), "cannot write"),
                                 (tmp_path / "no" / "such" / "b.rdb", "does not exist; create it first"),
                                 (tmp_path, "is a folder")):
            with pytest.raises(BadInput, match=fragment):
                backup(server, target)
        assert not (tmp_path / "no").exists()
        left = sorted(p.name for p in (tmp_path / "db").iterdir())
        assert not [n for n in left if n.endswith((".rdb", ".partial"))], left
        assert server.status() is not None  # the store still serves
        cli = _cli("backup", "/proc/neorag-backup-test.rdb", data_dir=tmp_path / "db")
        out = cli.stdout + cli.stderr
        assert cli.returncode == 2 and "error:" in out and "Traceback" not in out, out
        assert "cannot write /proc/neorag-backup-test.rdb" in " ".join(out.split()), out
        assert "dump.rdb" not in os.listdir(tmp_path / "db")
    finally:
        server.stop()


def _tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
            and p.suffix != ".log"}


def test_restore_verifies_the_whole_file_first(tmp_path: Path) -> None:
    """A truncated or bit-flipped backup passed the 5-byte header check and made the live store restart in a
    loop; now a scratch FalkorDB loads the whole file first: a bad one is refused with FalkorDB's own reason
    (even with --force) and the live data is untouched; a good one reports its counts (issue 25, item 4)."""
    server = EmbeddedServer(tmp_path / "db")
    server.start()
    store = _store(server)
    store.run_batched("document_upsert", [{"id": f"d{i}", "title": "T", "source": "t.txt", "props": {}}
                                          for i in range(50)])
    store.close()
    snap = tmp_path / "snap.rdb"
    backup(server, snap)
    server.stop()
    good = snap.read_bytes()
    truncated, flipped = tmp_path / "truncated.rdb", tmp_path / "flipped.rdb"
    truncated.write_bytes(good[: len(good) // 2])
    middle = len(good) // 2
    flipped.write_bytes(good[:middle] + bytes([good[middle] ^ 0x40]) + good[middle + 1:])
    live = _tree(tmp_path / "db")
    for bad in (truncated, flipped):
        for force in (False, True):
            with pytest.raises(BadInput, match="is not a loadable backup, the store was not touched") as err:
                restore(EmbeddedServer(tmp_path / "db"), bad, force=True) if force else \
                    restore(EmbeddedServer(tmp_path / "empty"), bad)
            assert "FalkorDB said:" in str(err.value) and "test-memory" not in str(err.value), err.value
        assert _tree(tmp_path / "db") == live  # nothing of the live store moved or changed
    assert not (tmp_path / "empty" / "appendonlydir").exists()
    cli = _cli("restore", str(truncated), data_dir=tmp_path / "empty")
    out = " ".join((cli.stdout + cli.stderr).split())
    assert cli.returncode == 2 and "is not a loadable backup" in out and "Traceback" not in out, out
    done = _cli("restore", str(snap), data_dir=tmp_path / "fresh")
    out = " ".join((done.stdout + done.stderr).split())
    assert done.returncode == 0 and "verified" in out and "50 nodes" in out, out
    fresh = EmbeddedServer(tmp_path / "fresh")
    fresh.start()
    try:
        docs = _store(fresh)._execute("MATCH (d:Document) RETURN count(d) AS n", {}, False)
        assert docs[0]["n"] == 50  # what the verification counted
    finally:
        fresh.stop()


def test_a_store_that_cannot_start_reports_the_real_reason(tmp_path: Path) -> None:
    """A corrupt store file: the start error (what the supervisor logs) names FalkorDB's reason, not the
    closing advice of its crash report ("Suspect RAM error? Use redis-server --test-memory")."""
    server = _stopped_store_with_one_document(tmp_path / "db")
    base = next((server.data_dir / "appendonlydir").glob("*.base.rdb"))
    data = base.read_bytes()
    base.write_bytes(data[: len(data) // 2])
    with pytest.raises(StoreUnavailable) as err:
        EmbeddedServer(tmp_path / "db").start()
    why = err.value.why
    assert "test-memory" not in why and "RAM" not in why, why
    assert any(word in why.lower() for word in ("rdb", "short read", "eof", "bad file", "error")), why
