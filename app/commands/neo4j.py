"""``neorag neo4j install | start | stop | status | dump | load | import``: a local Neo4j Community server
without Docker, its offline backup, and the bulk import of a KG source."""

from __future__ import annotations

from pathlib import Path

import typer

from app.commands.common import load_settings

say = typer.echo  # plain lines: a URI or a command must never be wrapped

DATA_DIR = typer.Option(None, "--data-dir", help="Data dir (default NEORAG_NEO4J_DATA_DIR, ./.neorag/neo4j).")


def register(cli: typer.Typer) -> None:
    """Attach the ``neo4j`` group."""
    group = typer.Typer(help="Run a local Neo4j 5.26 Community server (jars from Maven Central, no Docker).",
                        no_args_is_help=True)

    @group.command("install")
    def install(apoc: bool = typer.Option(None, "--apoc/--no-apoc", help="Also resolve APOC core."),
                cds: bool = typer.Option(True, "--cds/--no-cds",
                                         help="Build the class-data-sharing archive that makes every later "
                                         "start seconds faster (once, ~20 s).")) -> None:
        """Resolve the pinned Neo4j jars with Maven, compile the launcher and build the start-up archive
        (once; start resolves and compiles too, but never builds the archive)."""
        from app.store.neo4j_cds import build_archive
        from app.store.neo4j_server import server_from_settings

        runtime = server_from_settings(load_settings(), apoc=apoc).runtime
        report = runtime.ensure()
        if report.resolved_now:
            say(f"Neo4j {runtime.version} resolved into {report.home}: {report.download_mb} MB of "
                          f"jars in {report.seconds} s")
        else:
            say(f"Neo4j {runtime.version} already resolved in {report.home}")
        if cds:
            archive = build_archive(runtime)
            word = f"built in {archive.seconds} s" if archive.built_now else "already built"
            say(f"start-up archive {word}: {archive.path} ({archive.size_mb} MB)")

    @group.command("start")
    def start(
        data_dir: Path = DATA_DIR,
        bolt_port: int = typer.Option(None, "--bolt-port",
                                      help="Bolt port (default: NEORAG_NEO4J_URI's, 7687)."),
        http_port: int = typer.Option(None, "--http-port", help="HTTP/Browser port (default 7474)."),
        password: str = typer.Option(None, "--password", help="The neo4j user's password, 8+ characters "
                                     "(default NEORAG_NEO4J_PASSWORD)."),
        apoc: bool = typer.Option(None, "--apoc/--no-apoc",
                                  help="Load APOC core (default NEORAG_NEO4J_APOC)."),
    ) -> None:
        """Start Neo4j in the background (or reuse the running one); returns once Bolt accepts a login."""
        from app.store.neo4j_server import server_from_settings

        settings = load_settings()
        server = server_from_settings(settings, data_dir, bolt_port, http_port, password, apoc)
        if not server.runtime.is_ready():
            say(f"resolving Neo4j {server.runtime.version} with Maven into {server.runtime.home} "
                          "(once; about 140 MB)")
        info = server.start(settings.neo4j_start_timeout_s)
        word = f"started in {info.start_seconds} s" if info.started_here else "already running"
        say(f"Neo4j {info.version} Community {word} (pid {info.pid}), data {info.data_dir}")
        say(f"  URI      {info.uri}")
        say("  user     neo4j (password: --password / NEORAG_NEO4J_PASSWORD)")
        say(f"  Browser  {info.browser_url}")
        say(f"serve NeoRAG on it:  NEORAG_BACKEND=neo4j NEORAG_NEO4J_URI={info.uri} neorag serve")

    @group.command("stop")
    def stop(data_dir: Path = DATA_DIR) -> None:
        """Shut Neo4j down cleanly (its data stays in the data dir)."""
        from app.store.neo4j_server import server_from_settings

        stopped = server_from_settings(load_settings(), data_dir).stop()
        say("Neo4j stopped" if stopped else "Neo4j was not running")

    @group.command("status")
    def status(data_dir: Path = DATA_DIR) -> None:
        """Say whether Neo4j runs for the data dir: version, pid, ports (exit code 1 when not)."""
        from app.store.neo4j_server import server_from_settings

        server = server_from_settings(load_settings(), data_dir)
        info = server.status()
        if info is None:
            say(f"not running (data dir {server.data_dir})")
            raise typer.Exit(1)
        say(f"running: Neo4j {info.version} (pid {info.pid}), Bolt {info.uri}, "
                      f"Browser {info.browser_url}, data {info.data_dir}")

    @group.command("dump")
    def dump(
        path: Path = typer.Argument(..., help="File to write (a Neo4j dump archive, as neo4j-admin writes)."),
        data_dir: Path = DATA_DIR,
        database: str = typer.Option(None, "--database", help="Database (default NEORAG_NEO4J_DATABASE)."),
    ) -> None:
        """Dump the database of a stopped local Neo4j (Community backs up offline: stop it first)."""
        from app.store.neo4j_backup import dump as write_dump
        from app.store.neo4j_server import server_from_settings

        settings = load_settings()
        server = server_from_settings(settings, data_dir)
        size = write_dump(server, path, database or settings.neo4j_database)
        say(f"dump written: {path} ({size} bytes) from {server.data_dir}")

    @group.command("load")
    def load(
        path: Path = typer.Argument(..., help="A dump (`neorag neo4j dump`, `neo4j-admin database dump`)."),
        data_dir: Path = DATA_DIR,
        database: str = typer.Option(None, "--database", help="Database (default NEORAG_NEO4J_DATABASE)."),
        force: bool = typer.Option(False, "--force", help="Stop a running server and keep the old database "
                                   "aside, load anyway."),
    ) -> None:
        """Load a dump into the data dir (refuses a running server or an existing database)."""
        from app.store.neo4j_backup import load as load_dump
        from app.store.neo4j_server import server_from_settings

        settings = load_settings()
        server = server_from_settings(settings, data_dir)
        kept = load_dump(server, path, database or settings.neo4j_database, force=force)
        say(f"loaded {path} into {server.data_dir}; `neorag neo4j start --data-dir {server.data_dir}` "
            "serves it")
        if kept is not None:
            say(f"the previous database files were kept in {kept}")

    @group.command("import")
    def import_kg(
        path: Path = typer.Argument(
            ..., help="RoG parquet/JSON/JSONL, subgraphs folder, KG-R1 data folder, PathQuestion file."),
        dataset: str = typer.Option(..., "--dataset", "-d", help="Dataset name (e.g. webqsp, cwq, pq2h)."),
        data_dir: Path = DATA_DIR,
        split: str = typer.Option(None, "--split", help="Only this split (as `neorag kg load`)."),
        kb: Path = typer.Option(None, "--kb", help="PathQuestion KB (default: beside PATH)."),
        hops: int = typer.Option(None, "--hops", help="PathQuestion radius (default: path length)."),
        entity_names: str = typer.Option("auto", "--entity-names",
                                         help="KG-R1 folder: 'text', 'mid' or 'auto' (as `neorag kg load`)."),
        force: bool = typer.Option(False, "--force", help="Stop a running server and keep the old database "
                                   "aside, import anyway."),
    ) -> None:
        """Bulk-import a KG source into a fresh database with Neo4j's importer, then start the server
        (the same graph as `neorag kg load`; refuses a running server or an existing database)."""
        from app.commands.kg_bulk import run_bulk

        run_bulk(load_settings(), path, dataset, data_dir, split=split, kb=kb, hops=hops,
                 entity_names=entity_names, force=force)

    cli.add_typer(group, name="neo4j")
