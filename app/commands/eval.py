"""``neorag eval ...``: the evaluation command group.

Adding a command: create app/commands/eval_<name>.py (the CLI wiring; the logic goes in app/evaluation/)
exposing ``register(eval_app: typer.Typer) -> None`` and list it in ``EVAL_MODULES``.
"""

from __future__ import annotations

import typer

from app.commands import eval_corag, eval_kgqa, eval_retrieval

EVAL_MODULES = (eval_retrieval, eval_kgqa, eval_corag)


def register(cli: typer.Typer) -> None:
    """Attach the ``eval`` group and every available evaluation command."""
    eval_app = typer.Typer(
        help="Evaluate retrieval and reasoning on benchmark datasets.", no_args_is_help=True
    )
    for module in EVAL_MODULES:
        module.register(eval_app)
    cli.add_typer(eval_app, name="eval")
