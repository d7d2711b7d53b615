"""``neorag db start | stop | status`` for the embedded FalkorDB server."""

from __future__ import annotations

import logging
from pathlib import Path

import typer
from rich.console import Console

from app.commands.common import load_settings
from app.core.config import Settings
from app.core.errors import ConfigError
from app.store.factory import embedded_server

log = logging.getLogger(__name__)

console = Console()


LEGACY_STORE = Path("./data/falkordb")  # the data dir before issue 14 (inside the default ingest root)


def legacy_store_warning(settings: Settings) -> str | None:
    """A warning when a store is still in the old ``./data/falkordb`` while the settings use another dir."""
    from app.store.embedded import has_data

    old, new = LEGACY_STORE.resolve(), Path(settings.falkor_data_dir).resolve()
    if old == new or not has_data(old):
        return None
    return (f"an old NeoRAG store is in {LEGACY_STORE} but the data dir is now {settings.data_dir} "
            f"(store {settings.falkor_data_dir}); to keep using it: `neorag db stop` with "
            f"NEORAG_FALKOR_DATA_DIR={LEGACY_STORE}, then move it: mkdir -p {settings.data_dir} && "
            f"mv {LEGACY_STORE} {settings.falkor_data_dir}  (or set NEORAG_FALKOR_DATA_DIR={LEGACY_STORE})")


def warn_legacy_store(settings: Settings) -> None:
    """Log (and print) :func:`legacy_store_warning` when there is one."""
    text = legacy_store_warning(settings)
    if text:
        log.warning(text)
        console.print(f"[yellow]warning:[/yellow] {text}")


def not_for_neo4j(settings: Settings, command: str) -> None:
    """``db backup | restore`` handle the embedded store only: on Neo4j, name the command that does."""
    if settings.backend == "neo4j":
        raise ConfigError("NEORAG_BACKEND=neo4j: `neorag db` manages the embedded FalkorDB store only",
                          "Neo4j Community dumps and loads a stopped database with its own admin tool",
                          f"stop Neo4j, then run `{command}` (a remote Neo4j: `neo4j-admin database "
                          "dump|load` on its host)")


def register(cli: typer.Typer) -> None:
    """Attach the ``db`` group."""
    db = typer.Typer(help="Manage the embedded FalkorDB server.", no_args_is_help=True)

    @db.command("start")
    def start() -> None:
        """Start (or reuse) the embedded server for the configured data dir, on the port recorded there;
        it keeps running."""
        settings = load_settings()
        warn_legacy_store(settings)
        info = embedded_server(settings).start()
        word = "started" if info.started_here else "already running"
        console.print(f"FalkorDB {word}: pid {info.pid}, 127.0.0.1:{info.port}, data {info.data_dir}")

    @db.command("stop")
    def stop() -> None:
        """Stop the embedded server (flushes its append-only file)."""
        stopped = embedded_server(load_settings()).stop()
        console.print("FalkorDB stopped" if stopped else "FalkorDB was not running")

    @db.command("status")
    def status() -> None:
        """Say whether the embedded server runs, and where."""
        settings = load_settings()
        info = embedded_server(settings).status()
        if info:
            console.print(f"running: pid {info.pid}, 127.0.0.1:{info.port}, data {info.data_dir}")
        else:
            console.print(f"not running (data dir {settings.falkor_data_dir})")
            warn_legacy_store(settings)
            raise typer.Exit(1)

    def one_path(positional: Path | None, option: Path | None, flag: str) -> Path:
        if (positional is None) == (option is None):
            console.print(f"[red]error:[/red] give the file once: PATH or {flag} PATH")
            raise typer.Exit(2)
        return positional or option  # type: ignore[return-value]

    @db.command("backup")
    def backup(
        path: Path | None = typer.Argument(None, help="File to write the snapshot to (RDB)."),
        to: Path | None = typer.Option(None, "--to", help="Same as PATH."),
    ) -> None:
        """Write a consistent snapshot of the embedded store (BGSAVE; it keeps serving meanwhile)."""
        from app.store.backup import backup as write_backup

        to = one_path(path, to, "--to")
        settings = load_settings()
        not_for_neo4j(settings, "neorag neo4j dump PATH")
        size = write_backup(embedded_server(settings), to)
        console.print(f"backup written: {to} ({size} bytes)")

    @db.command("restore")
    def restore(
        path: Path | None = typer.Argument(None, help="A file written by `neorag db backup`."),
        source: Path | None = typer.Option(None, "--from", help="Same as PATH."),
        force: bool = typer.Option(False, "--force", help="Stop a server using the store, keep the old files "
                                   "aside, restore anyway."),
    ) -> None:
        """Restore a backup into the configured data dir (refuses a running or non-empty store)."""
        from app.store.backup import restore_verified

        source = one_path(path, source, "--from")
        settings = load_settings()
        not_for_neo4j(settings, "neorag neo4j load PATH")
        kept, counts = restore_verified(embedded_server(settings), source, force=force)
        shown = ", ".join(f"{g}: {c['nodes']} nodes, {c['edges']} edges" for g, c in sorted(counts.items()))
        console.print(f"verified {source} (loaded whole by a scratch FalkorDB: {shown or 'no graphs'})")
        console.print(f"restored {source} into {settings.falkor_data_dir}; it loads at the next "
                      "`neorag serve` / `neorag db start`")
        if kept is not None:
            console.print(f"the previous store files were kept in {kept}")

    cli.add_typer(db, name="db")
