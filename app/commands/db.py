"""``neorag db start | stop | status`` for the embedded FalkorDB server."""

from __future__ import annotations

import typer
from rich.console import Console

from app.commands.common import load_settings
from app.store.factory import embedded_server

console = Console()


def register(cli: typer.Typer) -> None:
    """Attach the ``db`` group."""
    db = typer.Typer(help="Manage the embedded FalkorDB server.", no_args_is_help=True)

    @db.command("start")
    def start() -> None:
        """Start (or reuse) the embedded server for the configured data dir; it keeps running."""
        info = embedded_server(load_settings()).start()
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
            raise typer.Exit(1)

    cli.add_typer(db, name="db")
