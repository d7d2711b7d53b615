"""``neorag eval ...``: the evaluation command group.

Adding a command: create app/evaluation/<name>.py exposing ``register(eval_app: typer.Typer) -> None``
and list it in ``EVAL_MODULES``.
"""

from __future__ import annotations

import typer

from app.evaluation import corag_cli, kgqa_cli, retrieval_cli

EVAL_MODULES = (retrieval_cli, kgqa_cli, corag_cli)


def register(cli: typer.Typer) -> None:
    """Attach the ``eval`` group and every available evaluation command."""
    eval_app = typer.Typer(
        help="Evaluate retrieval and reasoning on benchmark datasets.", no_args_is_help=True
    )
    for module in EVAL_MODULES:
        module.register(eval_app)
    cli.add_typer(eval_app, name="eval")
