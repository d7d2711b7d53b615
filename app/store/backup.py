"""Backup and restore of the embedded FalkorDB store (one RDB snapshot file).

Backup: ``BGSAVE`` forks the server, so the snapshot is consistent while it keeps serving; the RDB is
copied to the target file atomically. A store that is not running is started for the snapshot and
stopped again. Restore: the whole file is first loaded by a scratch FalkorDB (temp dir, free port), so a
truncated or corrupted backup is refused before the live store is touched; then the RDB becomes the base
of a fresh append-only file set (Redis 7+ multi-part AOF: ``appendonlydir/`` with a manifest), which the
server loads at its next start.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import tempfile
import time
from pathlib import Path

import redis

from app.core.errors import BadInput, StoreUnavailable
from app.store.embedded import AOF_DIR, LOCK_FILE, EmbeddedServer, ServerInfo, free_port, has_data

RDB_MAGIC = b"REDIS"
BASE = "appendonly.aof.1.base.rdb"
INCR = "appendonly.aof.1.incr.aof"
MANIFEST = "appendonly.aof.manifest"
BACKUP_LOCK = "neorag-backup.lock"


def check_target(target: Path) -> Path:
    """The resolved backup file, or BadInput (one line) before anything is started: its folder must exist
    (it is not created: a typo in the path should not make a new tree) and be writable, and it must not
    be a folder."""
    target = Path(target).expanduser().resolve()
    folder = target.parent
    if not folder.is_dir():
        raise BadInput(f"--to: the folder {folder} does not exist; create it first (mkdir -p {folder})",
                       field="to")
    if target.is_dir():
        raise BadInput(f"--to: {target} is a folder; name the backup file (e.g. {target}/neorag.rdb)",
                       field="to")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise BadInput(f"--to: cannot write to the folder {folder} (permission denied)", field="to")
    return target


def backup(server: EmbeddedServer, target: Path, wait_s: float = 3600.0) -> int:
    """Write a consistent snapshot of the store to ``target``; returns its size in bytes. A target that
    cannot be written is refused before the store is touched, and a failed copy leaves nothing behind
    (neither a partial file nor the server's ``dump.rdb``)."""
    target = check_target(target)
    info = server.status()
    started = info is None
    if info is None:
        info = server.start()
    try:
        with open(server.data_dir / BACKUP_LOCK, "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # one snapshot at a time per store (they share dump.rdb)
            dump = _bgsave(info.host, info.port, server.data_dir, wait_s)
            tmp = target.with_name(f".{target.name}.partial")
            try:
                shutil.copyfile(dump, tmp)
                os.replace(tmp, target)
            except OSError as exc:
                tmp.unlink(missing_ok=True)
                raise BadInput(f"--to: cannot write {target}: {exc.strerror or exc}", field="to") from None
            finally:
                dump.unlink(missing_ok=True)
    finally:
        if started:
            server.stop()
    return target.stat().st_size


def _bgsave(host: str, port: int, data_dir: Path, wait_s: float) -> Path:
    conn = redis.Redis(host=host, port=port, socket_connect_timeout=3, socket_timeout=30)
    try:
        before = int(conn.info("persistence").get("rdb_saves", 0))
        try:
            conn.bgsave()
        except redis.exceptions.ResponseError as exc:  # a save already running: wait for it, then ours
            if "already in progress" not in str(exc):
                raise
            _wait_saves(conn, before, wait_s)
            before = int(conn.info("persistence").get("rdb_saves", 0))
            conn.bgsave()
        _wait_saves(conn, before, wait_s)
        persistence = conn.info("persistence")
        if persistence.get("rdb_last_bgsave_status") != "ok":
            raise StoreUnavailable("FalkorDB could not write its snapshot", "BGSAVE failed",
                                   f"see {data_dir / 'falkordb.log'} (disk space?)")
        dbfile = str(conn.config_get("dbfilename").get("dbfilename", "dump.rdb"))
    except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError, OSError) as exc:
        raise StoreUnavailable("FalkorDB is unreachable", str(exc), "see `neorag db status`") from exc
    finally:
        conn.close()
    return data_dir / dbfile


def _wait_saves(conn: redis.Redis, before: int, wait_s: float) -> None:
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        info = conn.info("persistence")
        if int(info.get("rdb_saves", 0)) > before and not info.get("rdb_bgsave_in_progress"):
            return
        time.sleep(0.05)
    raise StoreUnavailable("FalkorDB's snapshot did not finish", f"waited {wait_s:.0f} s", "retry later")


def _lay_out(source: Path, folder: Path) -> None:
    """``folder`` becomes an append-only file set whose base is the RDB ``source`` (as a server loads it)."""
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    shutil.copyfile(source, folder / BASE)
    (folder / INCR).write_bytes(b"")
    (folder / MANIFEST).write_text(f"file {BASE} seq 1 type b\nfile {INCR} seq 1 type i\n")


def verify_backup(source: Path, wait_s: float = 1800.0) -> dict[str, dict[str, int]]:
    """Load ``source`` into a scratch FalkorDB (a temp data dir, a free port) and count every graph's nodes
    and edges; BadInput naming the server's own reason when it cannot be loaded (truncated, bit-flipped:
    redis checks the RDB's length and checksum while loading). Nothing of the live store is touched."""
    with tempfile.TemporaryDirectory(prefix="neorag-restore-check-") as tmp:
        scratch = EmbeddedServer(Path(tmp), port=free_port())
        _lay_out(source, Path(tmp) / AOF_DIR)
        try:
            info = scratch.start(load_wait_s=wait_s)
        except StoreUnavailable as exc:
            raise BadInput(f"--from: {source} is not a loadable backup, the store was not touched; "
                           f"FalkorDB said: {exc.why or exc.what}", field="from") from None
        try:
            return _graph_counts(info.host, info.port)
        finally:
            scratch.stop(compact_wait_s=0)


def _graph_counts(host: str, port: int) -> dict[str, dict[str, int]]:
    """``{graph: {"nodes": n, "edges": m}}`` of every graph on a server."""
    conn = redis.Redis(host=host, port=port, socket_connect_timeout=3, socket_timeout=300)
    try:
        counts = {}
        for raw in conn.execute_command("GRAPH.LIST"):
            graph = raw.decode() if isinstance(raw, bytes) else str(raw)
            nodes = conn.execute_command("GRAPH.RO_QUERY", graph, "MATCH (n) RETURN count(n)")[1][0][0]
            edges = conn.execute_command("GRAPH.RO_QUERY", graph, "MATCH ()-[r]->() RETURN count(r)")[1][0][0]
            counts[graph] = {"nodes": int(nodes), "edges": int(edges)}
        return counts
    finally:
        conn.close()


def _refuse_unless_forced(server: EmbeddedServer, force: bool) -> ServerInfo | None:
    """The server running on the data dir (None when none); 409 for it, or for a data dir that already
    holds a store, unless ``force``."""
    data_dir = server.data_dir
    running = server.status()
    if running and not force:
        raise BadInput(f"a FalkorDB server (pid {running.pid}) uses {data_dir}; stop `neorag serve` / "
                       "run `neorag db stop` first, or pass --force", status=409)
    if has_data(data_dir) and not force:
        raise BadInput(f"{data_dir} already holds a store; restore into an empty data dir "
                       "(NEORAG_DATA_DIR) or pass --force (the old files are kept aside)", status=409)
    return running


def restore(server: EmbeddedServer, source: Path, force: bool = False) -> Path | None:
    """Make ``source`` (an RDB from :func:`backup`) the store of ``server``'s data dir; see
    :func:`restore_verified` (this returns only the folder the old files were kept in)."""
    return restore_verified(server, source, force)[0]


def restore_verified(server: EmbeddedServer, source: Path,
                     force: bool = False) -> tuple[Path | None, dict[str, dict[str, int]]]:
    """Make ``source`` (an RDB from :func:`backup`) the store of ``server``'s data dir, after the whole file
    was verified (:func:`verify_backup`: a bad file is refused, even with ``force``, before the live store
    is touched); returns the folder the old files were kept in and the verified counts per graph.

    Refuses while a server runs on the data dir or when it already holds a store, unless ``force``:
    then the running server is stopped and the old files are kept aside (the returned path). The
    store is not started; the next ``neorag serve`` / ``db start`` loads the restored snapshot."""
    source = Path(source)
    try:
        with open(source, "rb") as fh:
            magic = fh.read(len(RDB_MAGIC))
    except OSError as exc:
        raise BadInput(f"--from: cannot read {source}: {exc.strerror or exc}", field="from") from exc
    if magic != RDB_MAGIC:
        raise BadInput(f"--from: {source} is not a NeoRAG/FalkorDB backup (no RDB header)", field="from")
    data_dir = server.data_dir
    _refuse_unless_forced(server, force)  # before the (possibly long) verification too
    counts = verify_backup(source)
    data_dir.mkdir(parents=True, exist_ok=True)
    with open(data_dir / LOCK_FILE, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # a supervisor's restart waits for the restore to finish
        running = _refuse_unless_forced(server, force)
        if running:
            server.stop(compact_wait_s=0)
        kept = None
        if (data_dir / AOF_DIR).exists():
            kept = data_dir / f"{AOF_DIR}.before-restore-{time.strftime('%Y%m%d-%H%M%S')}"
            os.replace(data_dir / AOF_DIR, kept)
        fresh = data_dir / f".{AOF_DIR}.restoring"
        _lay_out(source, fresh)
        os.replace(fresh, data_dir / AOF_DIR)
    return kept, counts
