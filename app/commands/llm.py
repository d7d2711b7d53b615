"""``neorag llm serve``: the bundled (or any GGUF) model behind an OpenAI-compatible server (foreground)."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console

from app.commands.common import load_settings

console = Console(stderr=True)


def register(cli: typer.Typer) -> None:
    """Attach the ``llm`` group."""
    llm_app = typer.Typer(help="The local model server (llama.cpp via xllamacpp).", no_args_is_help=True)

    @llm_app.command("serve")
    def serve(
        model: Path | None = typer.Option(None, "--model", help="GGUF file (default NEORAG_LLM_MODEL_PATH, "
                                          "else the bundled SmolLM2-135M-Instruct)."),
        port: int | None = typer.Option(None, "--port", min=0, max=65535, help="Port (0 = a free one)."),
        ctx: int | None = typer.Option(None, "--ctx", min=256, help="Context tokens per slot."),
        parallel: int | None = typer.Option(None, "--parallel", min=1, max=64, help="Parallel slots."),
        threads: int | None = typer.Option(None, "--threads", min=0, help="CPU threads (0 = half the cores)"),
        host: str = typer.Option("127.0.0.1", "--host", help="Bind address."),
    ) -> None:
        """Serve a GGUF model until Ctrl-C; point NEORAG_LLM_BASE_URL at the printed URL."""
        from app.services.local_llm import serve_config
        from app.services.local_llm_server import serve_forever

        settings = load_settings(llm_model_path=model, llm_local_port=port, llm_local_ctx=ctx,
                                 llm_parallel=parallel, llm_local_threads=threads)
        cfg = serve_config(settings)
        cfg.host = host

        def announce(address: str) -> None:
            console.print(f"serving {cfg.model.name} at {address}/v1 (ctx {cfg.ctx} x {cfg.parallel} slots, "
                          f"{cfg.threads} threads); use NEORAG_LLM_BASE_URL={address}/v1; Ctrl-C stops",
                          soft_wrap=True)

        serve_forever(cfg, announce=announce)

    cli.add_typer(llm_app, name="llm")
