"""``neorag ingest PATH [--incremental] [--refresh] ...`` with a rich progress bar and a counts table."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.progress import (
    BarColumn,
    Progress,
    TaskProgressColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from app.commands.common import load_settings

console = Console()


def _table(result: dict[str, Any]) -> Table:
    table = Table(title="ingest result", show_header=True)
    table.add_column("count")
    table.add_column("value", justify="right")
    for key, value in result.items():
        if key != "errors":
            table.add_row(key, str(value))
    return table


def register(cli: typer.Typer) -> None:
    """Attach the ``ingest`` command."""

    @cli.command("ingest")
    def ingest(
        path: Path = typer.Argument(..., help="File or directory (.txt, .md, .pdf, .json, .jsonl)."),
        incremental: bool = typer.Option(False, "--incremental", help="Skip chunks whose hash is unchanged."),
        refresh: bool = typer.Option(False, "--refresh", help="Rebuild entities/relations of stored chunks."),
        refresh_relations: bool = typer.Option(True, "--refresh-relations/--no-refresh-relations"),
        checkpoint: bool = typer.Option(True, "--checkpoint/--no-checkpoint", help="Resume via checkpoint."),
        llm_relations: bool | None = typer.Option(None, "--llm-relations/--no-llm-relations",
                                                  help="LLM REL edges (default: setting)."),
        rel_only: bool = typer.Option(False, "--relations-only", help="Relations-only incremental mode."),
        new_after: str | None = typer.Option(None, "--new-after", help="Relations-only: last old chunk id."),
        new_count: int | None = typer.Option(None, "--new-count", help="Relations-only: chunks appended."),
        rel_window: int | None = typer.Option(None, "--rel-window", min=1),
        graph: str | None = typer.Option(None, "--graph", help="Graph name (NEORAG_GRAPH_NAME)."),
    ) -> None:
        """Ingest documents into the graph (CLI paths are not limited to the HTTP ingest roots)."""
        from app.services.container import build_services
        from ingest.jobs import ingest_jobs
        from ingest.options import IngestOptions

        settings = load_settings(graph_name=graph)
        options = IngestOptions(incremental=incremental, refresh=refresh, refresh_relations=refresh_relations,
                                checkpoint=checkpoint, llm_relations=llm_relations, inc_rel_only=rel_only,
                                new_after=new_after, detect_after=new_count is not None, new_count=new_count,
                                rel_window=rel_window)
        services = build_services(settings)
        try:
            with Progress(TextColumn("{task.description}"), BarColumn(), TaskProgressColumn(),
                          TextColumn("{task.fields[rate]}"), TimeElapsedColumn(), TimeRemainingColumn(),
                          console=console, transient=False) as bar:
                tasks: dict[str, Any] = {}

                def task(name: str, total: int) -> Any:
                    if name not in tasks:
                        tasks[name] = bar.add_task(name, total=max(total, 1), rate="")
                    return tasks[name]

                def progress(ev: dict[str, Any]) -> None:
                    stage = ev.get("stage")
                    if stage == "hash_computed":
                        bar.update(task("files", ev.get("files", 0)), completed=ev.get("files", 0))
                    elif stage == "embedding_progress":
                        t = task("embeddings", ev["total"])
                        bar.update(t, completed=ev["current"], total=max(ev["total"], 1))
                        speed = bar.tasks[t].speed
                        bar.update(t, rate=f"{speed:.1f} chunks/s" if speed else "")
                    elif stage == "entity_extraction":
                        t = task("chunks", ev["total"])
                        bar.update(t, completed=ev["current"], total=max(ev["total"], 1))
                    elif stage in ("relation_extraction", "relation_incremental_progress"):
                        cur = ev.get("current", ev.get("processed", 0))
                        bar.update(task("relations", ev["total"]), completed=cur, total=max(ev["total"], 1))
                    elif stage == "llm_extraction":  # one event per chunk the LLM worked on (or cached)
                        t = task("llm chunks", ev["total"])
                        bar.update(t, completed=ev["current"], total=max(ev["total"], 1))
                        speed = bar.tasks[t].speed
                        bar.update(t, rate=f"{speed:.2f} chunks/s" if speed else "")
                    elif stage == "llm_warn":
                        console.print(f"[yellow]LLM[/] {ev['detail']}")
                    elif stage == "file_error":
                        console.print(f"[yellow]skipped[/] {ev['file']}: {ev['error']}")
                    elif stage in ("relation_warn", "relation_incremental_warn"):
                        console.print(f"[yellow]relation pair skipped[/] {ev['pair']}: {ev['error']}")

                # the same job registry and store lock as the server's ingests: another process ingesting
                # this path (a server, another CLI) is a clear 409-style error, not a second ingest
                target = path.expanduser().resolve()
                result = ingest_jobs(services).run_sync(services, target, options, progress)
        finally:
            services.close()
        console.print(_table(result))
