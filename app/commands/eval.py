"""``neorag eval ...``: the evaluation command group.

Adding a command: create app/evaluation/<name>.py exposing ``register(eval_app: typer.Typer) -> None``
and list the module in ``EVAL_MODULES`` (modules not present are skipped).
"""

from __future__ import annotations

import importlib

import typer

EVAL_MODULES = ("retrieval_cli", "kgqa_cli", "corag_cli")


def register(cli: typer.Typer) -> None:
    """Attach the ``eval`` group and every available evaluation command."""
    eval_app = typer.Typer(
        help="Evaluate retrieval and reasoning on benchmark datasets.", no_args_is_help=True
    )
    for name in EVAL_MODULES:
        try:
            mod = importlib.import_module(f"app.evaluation.{name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"app.evaluation.{name}":
                continue
            raise
        mod.register(eval_app)
    cli.add_typer(eval_app, name="eval")
