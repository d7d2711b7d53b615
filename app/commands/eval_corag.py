"""CLI wiring of ``neorag eval corag`` (CoRAG's custom_batch_eval flags; logic: evaluation/corag_eval.py)."""

from __future__ import annotations

from pathlib import Path

import typer


def register(eval_app: typer.Typer) -> None:
    """Attach ``eval corag``."""

    @eval_app.command("corag")
    def corag(
        eval_file: Path = typer.Option(
            ...,
            "--eval_file",
            "--eval-file",
            help="JSON list of {question, answer, [context, supporting_facts] | [paragraphs]}.",
        ),
        save_file: Path = typer.Option(
            ...,
            "--save_file",
            "--save-file",
            help="Results JSON (index 0 = summary); a PNG chart is written beside it.",
        ),
        calc_recall: bool = typer.Option(
            False, "--calc_recall", "--calc-recall", help="Micro recall of the golden facts."
        ),
        enable_naive_retrieval: bool = typer.Option(
            False,
            "--enable_naive_retrieval",
            "--enable-naive-retrieval",
            help="Also run single-step retrieval of the question.",
        ),
        max_path_length: int = typer.Option(3, "--max_path_length", "--max-path-length"),
        decode_strategy: str = typer.Option(
            "greedy", "--decode_strategy", "--decode-strategy", help="greedy | best_of_n | tree_search"
        ),
        best_n: int = typer.Option(4, "--best_n", "--best-n"),
        sample_temperature: float = typer.Option(0.7, "--sample_temperature", "--sample-temperature"),
        top_k: int = typer.Option(5, "--top_k", "--top-k", help="Passages per sub-query."),
        num_contexts: int = typer.Option(
            20, "--num_contexts", "--num-contexts", help="Final-answer passages and naive retrieval depth."
        ),
        num_threads: int = typer.Option(1, "--num_threads", "--num-threads"),
        limit: int = typer.Option(0, help="Evaluate only the first N questions (0 = all)."),
        corpus_file: Path = typer.Option(
            None,
            "--corpus_file",
            "--corpus-file",
            help="Ingest this corpus (or question file with paragraphs) first.",
        ),
        graph: str = typer.Option(None, help="Graph name to use (default NEORAG_GRAPH_NAME)."),
        vllm_api_base: str = typer.Option(
            None, "--vllm_api_base", help="LLM base URL (else NEORAG_LLM_BASE_URL)."
        ),
        vllm_api_key: str = typer.Option(
            None, "--vllm_api_key", help="LLM API key (else NEORAG_LLM_API_KEY)."
        ),
        vllm_model: str = typer.Option(None, "--vllm_model", help="LLM model (else NEORAG_LLM_MODEL)."),
        graph_api_url: str = typer.Option(
            None, "--graph_api_url", help="Accepted for CoRAG compatibility; retrieval runs in-process."
        ),
    ) -> None:
        """Run the CoRAG agent on an eval file with NeoRAG's hybrid retrieval; recall vs naive retrieval."""
        from app.commands.common import load_settings
        from app.core.errors import BadInput
        from app.evaluation.corag_eval import CoRAGEvalOptions, evaluate, load_eval_file, write_results
        from app.reasoning.corag import CoRAGConfig
        from app.services.container import build_services

        if decode_strategy not in ("greedy", "best_of_n", "tree_search"):
            raise BadInput(
                "--decode_strategy must be greedy, best_of_n or tree_search", field="decode_strategy"
            )
        items = load_eval_file(eval_file)
        if limit:
            items = items[:limit]
        agent = CoRAGConfig(
            max_path_length=max_path_length,
            decode_strategy=decode_strategy,  # type: ignore[arg-type]  # checked above
            best_n=best_n,
            temperature=sample_temperature,
            top_k=top_k,
            num_contexts=num_contexts,
        )
        opts = CoRAGEvalOptions(
            agent=agent,
            calc_recall=calc_recall,
            enable_naive_retrieval=enable_naive_retrieval,
            num_threads=num_threads,
            limit=limit,
        )
        if graph_api_url:
            typer.echo(
                f"note: --graph_api_url {graph_api_url} ignored; NeoRAG retrieves in-process", err=True
            )
        settings = load_settings(
            graph_name=graph, llm_base_url=vllm_api_base, llm_api_key=vllm_api_key, llm_model=vllm_model
        )
        services = build_services(settings)
        try:
            if corpus_file is not None:
                from ingest.pipeline import ingest_path

                done = ingest_path(services, corpus_file)
                typer.echo(f"ingested {done.documents} documents, {done.chunks_new} new chunks", err=True)
            results = evaluate(services, items, opts, lambda i, n: typer.echo(f"[{i}/{n}]", err=True))
        finally:
            services.close()
        json_path, png = write_results(results, save_file)
        s = results[0]
        line = f"{s['num_samples']} questions  avg time {s['avg_time']:.2f} s"
        line += f"  answer hit {s['answer_hit_rate']:.3f}"
        if "corag_micro_recall" in s:
            line += f"  CoRAG micro recall {s['corag_micro_recall']:.3f}"
        if "naive_micro_recall" in s:
            line += f"  naive micro recall {s['naive_micro_recall']:.3f}"
        typer.echo(line)
        typer.echo(f"wrote {json_path} and {png}")
