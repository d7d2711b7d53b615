"""The ``neorag`` command line: serve, db, and feature commands registered by modules."""

from __future__ import annotations

import logging
import sys

import typer
from rich.console import Console
from rich.markup import escape

from app.commands import db, ingest, kg, llm, mcp, models, neo4j, reembed, serve
from app.commands import eval as eval_commands
from app.core.errors import NeoRAGError

cli = typer.Typer(help="NeoRAG: Graph-RAG over Neo4j / embedded FalkorDB.", no_args_is_help=True)
console = Console(stderr=True)

for _module in (db, neo4j, serve, kg, ingest, eval_commands, mcp, reembed, llm, models):
    _module.register(cli)


def main() -> None:
    """Console-script entry point: one actionable line on known errors, no traceback."""
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    try:
        cli()
    except NeoRAGError as exc:
        # one line, whatever the terminal width; the message is plain text, never markup
        console.print(f"[bold red]error:[/] {escape(str(exc))}", soft_wrap=True)
        sys.exit(2)


if __name__ == "__main__":
    main()
