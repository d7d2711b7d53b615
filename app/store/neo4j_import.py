"""Runs Neo4j's bulk importer (``neo4j-admin database import full``) on the data dir of ``neorag neo4j``.

Like ``neorag neo4j load`` (:mod:`app.store.neo4j_backup`): offline, with the admin tool of the resolved
jars. A running server or an existing database is refused unless ``force``; then the server is stopped and
the old database folders are kept aside. The import is all or nothing: it tolerates no bad entry, and when
it fails its partial output is removed and the kept-aside database put back, untouched.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from app.core.errors import BadInput
from app.store.neo4j_backup import _admin, _keep_aside, _refuse_running, database_dirs
from app.store.neo4j_server import Neo4jServer

MAX_OFF_HEAP = "30%"  # of the machine's memory, for the importer's caches (the tool's default is 90%)


def check_target(server: Neo4jServer, database: str, force: bool) -> None:
    """Refuse (one line, 409) a running server or a data dir that already holds ``database``, unless
    ``force``; refuse a data dir another Neo4j version made."""
    if not force:
        _refuse_running(server, "import into")
        if database_dirs(server, database):
            raise BadInput(f"{server.data_dir} already holds the database {database!r}; a bulk import needs "
                           "a fresh --data-dir, or --force (the old files are kept aside)", status=409)
    server.check_version()


def run_import(server: Neo4jServer, database: str, files: list[str], workdir: Path,
               force: bool = False) -> Path | None:
    """Import the CSV ``files`` arguments (see :meth:`ingest.kg.bulk.BulkWriter.tool_args`) as
    ``database``; returns where the previous database was kept (None when there was none). The server
    is left stopped."""
    check_target(server, database, force)
    server.stop()
    kept = _keep_aside(server, database)
    java = server.prepare()[0]
    try:
        _admin(server, java, ["database", "import", "full", database, *files, "--bad-tolerance=0",
                              "--skip-bad-relationships=false", "--skip-duplicate-nodes=false",
                              f"--max-off-heap-memory={MAX_OFF_HEAP}",
                              f"--report-file={workdir / 'import.report'}"])
    except BaseException:
        _restore(server, database, kept)
        raise
    server.record_version()
    return kept


def _restore(server: Neo4jServer, database: str, kept: Path | None) -> None:
    """Remove a failed import's output and put the kept-aside database back where it was."""
    for folder in database_dirs(server, database):
        shutil.rmtree(folder, ignore_errors=True)
    if kept is None:
        return
    for folder in kept.iterdir():  # kept/<databases|transactions> -> data/<...>/<database>
        os.replace(folder, server.data_dir / "data" / folder.name / database)
    kept.rmdir()
