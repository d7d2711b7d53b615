"""``neorag reembed``: re-encode every chunk with the configured embedding model (issue 17)."""

from __future__ import annotations

import typer
from rich.console import Console

from app.commands.common import load_settings

console = Console()


def register(cli: typer.Typer) -> None:
    """Attach ``reembed``."""

    @cli.command("reembed")
    def reembed_command(
        graph: str | None = typer.Option(None, "--graph", help="Graph name (NEORAG_GRAPH_NAME)."),
        batch_size: int = typer.Option(256, "--batch-size", min=1, max=5000, help="Chunks per encode/write."),
    ) -> None:
        """Re-encode every chunk's text with NEORAG_EMBEDDING_MODEL, recreate the vector index when the
        dimension changes, and record the model in the graph (after switching models)."""
        from app.services.container import build_services
        from app.services.embedding_record import reembed, stored_record

        services = build_services(load_settings(graph_name=graph))
        try:
            emb = services.embedder
            before = stored_record(services.store)
            done = reembed(services.store, emb.encode_raw, emb.model_name, emb.dimension, batch_size,
                           lambda n: console.print(f"re-embedded {n} chunks", soft_wrap=True))
        finally:
            services.close()
        was = f"{before['model']} ({before['dimension']}-d)" if before else "unrecorded"
        console.print(f"{done} chunks re-embedded with {emb.model_name} ({emb.dimension}-d); was {was}",
                      soft_wrap=True)
