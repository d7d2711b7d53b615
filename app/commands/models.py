"""``neorag models``: install the packaged embedding models (bge-small-en-v1.5 from Maven Central)."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console

from app.commands.common import load_settings

console = Console()


def register(cli: typer.Typer) -> None:
    """Attach ``models install`` and ``models list``."""
    group = typer.Typer(help="Packaged embedding models (installed once; never downloaded at run time).",
                        no_args_is_help=True)
    cli.add_typer(group, name="models")

    @group.command("install")
    def install_command(
        name: str = typer.Argument(..., help="bge-small-en-v1.5"),
        jar: Path | None = typer.Option(None, "--jar",
                                        help="Use this jar (checked by sha256) instead of Maven."),
        models_dir: Path | None = typer.Option(None, "--models-dir",
                                               help="Install here (NEORAG_MODELS_DIR)."),
    ) -> None:
        """Fetch the model's pinned jar with Maven (or take --jar), check it and convert its ONNX weights
        into a sentence-transformers directory; then set NEORAG_EMBEDDING_MODEL to NAME."""
        from app.services.packaged_models import install

        root = models_dir or load_settings().models_dir
        path = install(name, root, jar)
        console.print(f"{name} installed in {path}; use it with NEORAG_EMBEDDING_MODEL={name} "
                      "(`neorag reembed` re-encodes an existing graph)", soft_wrap=True)

    @group.command("list")
    def list_command(
        models_dir: Path | None = typer.Option(None, "--models-dir", help="Look here (NEORAG_MODELS_DIR)."),
    ) -> None:
        """The packaged models, their source jar and whether each is installed."""
        from app.services.packaged_models import MARKER, PACKAGED, model_dir

        root = models_dir or load_settings().models_dir
        for model in sorted({m.name: m for m in PACKAGED.values()}.values(), key=lambda m: m.name):
            path = model_dir(root, model)
            state = f"installed in {path}" if (path / MARKER).is_file() else "not installed"
            console.print(f"{model.name}: {model.coordinates} ({model.licence}); {state}", soft_wrap=True)
