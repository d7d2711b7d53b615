"""CLI wiring of ``neorag eval kgqa`` (the logic is in app/evaluation/kgqa_eval.py)."""

from __future__ import annotations

from pathlib import Path
from typing import cast

import typer


def register(eval_app: typer.Typer) -> None:
    """Attach ``eval kgqa``."""

    @eval_app.command("kgqa")
    def kgqa(
        path: Path = typer.Argument(
            ..., help="RoG JSON/JSONL/parquet (file or folder) or a PathQuestion file."
        ),
        dataset: str = typer.Option(None, help="KG dataset name (default: the file's stem, e.g. PQ-2H)."),
        kb: Path = typer.Option(None, help="PathQuestion KB (default: <stem>-kb.txt beside the questions)."),
        split: str = typer.Option(None, help="RoG split to read from a folder (train/validation/test)."),
        method: str = typer.Option("structgpt", help="structgpt (needs an LLM) | baseline (BM25 walk)."),
        scope: str = typer.Option(
            "sample", help="sample: each question's own subgraph | graph: whole graph."
        ),
        limit: int = typer.Option(0, help="Evaluate only the first N questions (0 = all)."),
        load: bool = typer.Option(True, help="Load the questions' subgraphs into the store first."),
        graph: str = typer.Option(None, help="Graph name to use (default NEORAG_GRAPH_NAME)."),
        max_depth: int = typer.Option(3, "--max-depth", help="StructGPT hops."),
        width: int = typer.Option(5, help="StructGPT relations per step / entities per hop."),
        bidirectional: bool = typer.Option(True, help="Follow relations against their direction too."),
        max_tokens_budget: int = typer.Option(
            1024, "--max-tokens-budget", help="Triple serialisation budget."
        ),
        hops: int = typer.Option(2, help="Baseline: relations followed."),
        out: Path = typer.Option(
            None,
            help="JSON report (default eval_kgqa_<dataset>_<method>.json); "
            "the PNG chart is written beside it.",
        ),
    ) -> None:
        """Hits@1 and F1 of StructGPT (or a no-LLM baseline) against gold answers; tokens and latency."""
        from app.commands.common import load_settings
        from app.core.errors import BadInput
        from app.evaluation.kgqa_eval import KGQAOptions, Method, Scope, evaluate_records, write_report
        from app.services.container import build_services
        from ingest.kg import load_records
        from ingest.kg.readers import read_records

        if method not in ("structgpt", "baseline"):
            raise BadInput("--method must be structgpt or baseline", field="method")
        if scope not in ("sample", "graph"):
            raise BadInput("--scope must be sample or graph", field="scope")
        name = dataset or path.stem.replace("/", "_").replace("|", "_")
        records = list(read_records(path, name, split=split, kb=kb))
        if limit:
            records = records[:limit]
        if not records:
            raise BadInput(f"{path} holds no questions", field="path")
        settings = load_settings(graph_name=graph)
        services = build_services(settings)
        try:
            if load:
                report = load_records(services.store, name, records)
                typer.echo(
                    f"loaded {report.samples_loaded} samples ({report.samples_skipped} already there)",
                    err=True,
                )
            opts = KGQAOptions(
                dataset=name,
                method=cast(Method, method),
                scope=cast(Scope, scope),
                max_depth=max_depth,
                width=width,
                bidirectional=bidirectional,
                max_tokens_budget=max_tokens_budget,
                hops=hops,
                limit=limit,
            )
            result = evaluate_records(
                services,
                records,
                opts,
                lambda i, n: typer.echo(f"[{i}/{n}]", err=True) if i % 10 == 0 else None,
            )
        finally:
            services.close()
        target = out or Path(f"eval_kgqa_{name}_{method}.json")
        json_path, png = write_report(result, target)
        s = result["summary"]
        typer.echo(
            f"{s['questions']} questions  Hits@1 {s['hits@1']:.3f}  F1 {s['f1']:.3f}  "
            f"tokens/q {s['tokens_per_question']:.0f}  latency {s['latency_mean_s']:.2f} s/q"
        )
        typer.echo(f"wrote {json_path} and {png}")
