"""Dump and load of a local Neo4j's database (``neorag neo4j dump | load``), offline as Community requires.

Neo4j Community has no online backup: ``neo4j-admin database dump`` needs the database stopped. NeoRAG
runs Neo4j's own admin tool (``org.neo4j.cli.AdminTool``, in the jars NeoRAG resolved) against the data
dir of ``neorag neo4j``: the same archive format as ``neo4j-admin``, so a dump moves to and from any Neo4j
5.26 (a Docker one, a remote server, AuraDB's import).
"""

from __future__ import annotations

import os
import subprocess
import tempfile
import time
from pathlib import Path

from app.core.errors import BadInput, StoreUnavailable
from app.store.neo4j_server import Neo4jServer

ADMIN_TOOL = "org.neo4j.cli.AdminTool"
DUMP_MAGICS = (b"DZV1", b"DGV1")  # Neo4j 5 dump archives: zstd or gzip
ADMIN_TIMEOUT_S = 3600.0


def database_dirs(server: Neo4jServer, database: str) -> list[Path]:
    """A database's store and transaction-log folders under the data dir (those that exist)."""
    data = server.data_dir / "data"
    return [p for p in (data / "databases" / database, data / "transactions" / database) if p.exists()]


def dump(server: Neo4jServer, target: Path, database: str = "neo4j") -> int:
    """Write ``database`` of the stopped server to ``target`` (a Neo4j dump archive); returns its size."""
    _refuse_running(server, "dump")
    if not database_dirs(server, database):
        raise BadInput(f"{server.data_dir} holds no database {database!r} to dump "
                       "(start NeoRAG on it once, or check --data-dir)", field="data_dir", status=404)
    target = Path(target).resolve()
    target.parent.mkdir(parents=True, exist_ok=True)
    java = server.prepare()[0]
    with tempfile.TemporaryDirectory(prefix=".neorag-dump-", dir=target.parent) as tmp:
        _admin(server, java,
               ["database", "dump", database, f"--to-path={tmp}", "--overwrite-destination=true"])
        os.replace(Path(tmp) / f"{database}.dump", target)
    return target.stat().st_size


def load(server: Neo4jServer, source: Path, database: str = "neo4j", force: bool = False) -> Path | None:
    """Make ``source`` (a dump from :func:`dump` or ``neo4j-admin database dump``) the ``database`` of the
    data dir. Refuses a running server and a data dir that already holds the database, unless ``force``:
    then the server is stopped and the old database folders are kept aside (the returned path). The
    server is not started; the next ``neorag neo4j start`` serves the loaded database."""
    source = Path(source).resolve()
    try:
        with open(source, "rb") as fh:
            magic = fh.read(4)
    except OSError as exc:
        raise BadInput(f"cannot read {source}: {exc.strerror or exc}", field="path") from exc
    if magic not in DUMP_MAGICS:
        raise BadInput(f"{source} is not a Neo4j dump (no DZV1/DGV1 header)", field="path")
    if not force:
        _refuse_running(server, "load into")
    if database_dirs(server, database) and not force:
        raise BadInput(f"{server.data_dir} already holds the database {database!r}; load into a fresh "
                       "--data-dir or pass --force (the old files are kept aside)", status=409)
    server.check_version()
    server.stop()
    kept = _keep_aside(server, database)
    java = server.prepare()[0]  # also makes the data dir the work dir below lives in
    with tempfile.TemporaryDirectory(prefix=".neorag-load-", dir=server.data_dir) as tmp:
        os.symlink(source, Path(tmp) / f"{database}.dump")  # the tool reads <from-path>/<database>.dump
        _admin(server, java,
               ["database", "load", database, f"--from-path={tmp}", "--overwrite-destination=true"])
    server.record_version()
    return kept


def _refuse_running(server: Neo4jServer, verb: str) -> None:
    running = server.status()
    if running is not None:
        raise BadInput(f"Neo4j (pid {running.pid}) is running on {server.data_dir}; Community can only "
                       f"{verb} a stopped database: run `neorag neo4j stop --data-dir {server.data_dir}` "
                       "first", status=409)


def _keep_aside(server: Neo4jServer, database: str) -> Path | None:
    dirs = database_dirs(server, database)
    if not dirs:
        return None
    kept = server.data_dir / f"{database}.before-load-{time.strftime('%Y%m%d-%H%M%S')}"
    kept.mkdir()
    for folder in dirs:
        os.replace(folder, kept / folder.parent.name)
    return kept


def _admin(server: Neo4jServer, java: str, args: list[str]) -> None:
    """Run Neo4j's admin tool on the prepared data dir (NEO4J_HOME) with its neo4j.conf (NEO4J_CONF)."""
    env = {**os.environ, "NEO4J_HOME": str(server.data_dir), "NEO4J_CONF": str(server.data_dir)}
    try:
        done = subprocess.run([java, "-cp", server.runtime.classpath(), ADMIN_TOOL, *args], env=env,
                              capture_output=True, text=True, timeout=ADMIN_TIMEOUT_S, check=False,
                              stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as exc:
        raise StoreUnavailable(f"neo4j-admin {' '.join(args[:2])} did not finish",
                               f"waited {ADMIN_TIMEOUT_S:.0f} s", "retry, or run it by hand") from exc
    if done.returncode != 0:
        lines = [ln for ln in (done.stderr + done.stdout).splitlines()
                 if ln.strip() and not ln.startswith("Files:")]
        raise StoreUnavailable(f"neo4j-admin {' '.join(args[:2])} failed (exit {done.returncode})",
                               " | ".join(lines[-3:])[:400] or "no output", f"data dir {server.data_dir}")

