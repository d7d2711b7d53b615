"""CLI wiring of `neorag eval retrieval` (the logic is in app/evaluation/retrieval_eval.py)."""

from __future__ import annotations

import json
from pathlib import Path

import typer


def register(eval_app: typer.Typer) -> None:
    """Attach ``eval retrieval``."""

    @eval_app.command("retrieval")
    def retrieval(
        path: Path = typer.Argument(
            ..., help="Dataset folder (questions *.json + *_corpus.json) or a questions file."
        ),
        dataset: str = typer.Option(..., "--dataset", help="hotpotqa | musique | 2wiki"),
        graph: str = typer.Option(None, help="Graph to ingest into (default eval_<dataset>)."),
        limit: int = typer.Option(0, help="Evaluate only N questions (0 = all)."),
        skip: int = typer.Option(0, help="Skip the first N questions (e.g. a held-out second half)."),
        depth: int = typer.Option(2, help="Graph expansion depth for hybrid+graph."),
        reuse: bool = typer.Option(False, help="Skip ingest and reuse the graph as it is."),
        json_out: Path = typer.Option(None, "--json-out", help="Also write the JSON report here."),
    ) -> None:
        """Recall@{2,5,10} and p50 latency of every variant side by side (ablation table)."""
        from app.commands.common import load_settings
        from app.evaluation.retrieval_eval import (
            beats_single,
            eval_settings,
            evaluate,
            ingest_corpus,
            load_dataset,
            table,
        )
        from app.services.container import build_services

        questions, corpus = load_dataset(dataset, path)
        questions = questions[skip:]
        if limit:
            questions = questions[:limit]
        settings = eval_settings(load_settings(), dataset, graph)
        services = build_services(settings)
        try:
            ingested = None if reuse else ingest_corpus(services, corpus)
            report = evaluate(services, questions, depth)
        finally:
            services.close()
        report.update({"dataset": dataset, "path": str(path), "graph": settings.graph_name, "depth": depth,
                       "skip": skip, "embedding_model": settings.embedding_model})
        if ingested:
            report["ingest"] = {k: v for k, v in ingested.items() if isinstance(v, int | float)}
        report["default_beats_single_retrievers"] = beats_single(report)
        typer.echo(table(report))
        text = json.dumps(report, indent=2)
        typer.echo(text)
        if json_out:
            json_out.write_text(text + "\n", encoding="utf-8")
