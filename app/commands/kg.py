"""``neorag kg load PATH --dataset NAME [--split S] [--replace | --bulk [--force]]``: load KG subgraphs into
the store (``--bulk``: Neo4j's importer into a fresh local Neo4j database, :mod:`app.commands.kg_bulk`);
``neorag kg browse DATASET SAMPLE_ID``: write one sample's ``KG_FACT`` edges (:mod:`app.kg.browse`)."""

from __future__ import annotations

import time
from pathlib import Path

import typer
from rich.console import Console
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from app.commands.common import load_settings
from app.commands.kg_bulk import require_local_neo4j, run_bulk
from app.core.errors import BadInput
from app.store.factory import embedded_server, make_store

console = Console(stderr=True)


def register(cli: typer.Typer) -> None:
    """Attach the ``kg`` group."""
    kg = typer.Typer(help="Knowledge-graph subgraphs for KG actions (KG-R1).", no_args_is_help=True)

    @kg.command("load")
    def load(
        path: Path = typer.Argument(
            ..., help="RoG parquet/JSON/JSONL, subgraphs folder, KG-R1 data folder, PathQuestion file."),
        dataset: str = typer.Option(..., "--dataset", "-d", help="Dataset name (e.g. webqsp, cwq, pq2h)."),
        split: str | None = typer.Option(
            None, "--split",
            help="Only this split (parquet files; KG-R1 folder: <split>_simple.json, default train+test)."),
        replace: bool = typer.Option(False, "--replace", help="Swap the triples of samples already loaded."),
        kb: Path | None = typer.Option(None, "--kb", help="PathQuestion KB (default: beside PATH)."),
        hops: int | None = typer.Option(None, "--hops", help="PathQuestion radius (default: path length)."),
        entity_names: str = typer.Option(
            "auto", "--entity-names",
            help="KG-R1 folder: 'text' (entities_text.txt), 'mid' (entities.txt), 'auto' (text if present)."),
        bulk: bool = typer.Option(
            False, "--bulk", help="NEORAG_BACKEND=neo4j: import into a fresh local `neorag neo4j` database "
            "with Neo4j's bulk importer (the server is started after), as `neorag neo4j import`."),
        force: bool = typer.Option(False, "--force", help="--bulk: stop a running server and keep the old "
                                   "database aside, import anyway."),
    ) -> None:
        """Load samples (idempotent: existing samples are skipped unless --replace)."""
        from ingest.kg.loader import load_path

        settings = load_settings()
        if bulk or force:
            if replace or not bulk:
                raise BadInput("--bulk imports a fresh database (no --replace); --force goes with --bulk")
            require_local_neo4j(settings)
            run_bulk(settings, path, dataset, split=split, kb=kb, hops=hops, entity_names=entity_names,
                     force=force)
            return
        server = embedded_server(settings).start() if settings.backend == "embedded" else None
        store = make_store(settings, server)
        started = time.perf_counter()
        try:
            with Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(),
                          console=console, transient=False) as bar:
                task = bar.add_task("loading", total=None)

                def progress(samples: int, triples: int) -> None:
                    rate = triples / max(time.perf_counter() - started, 1e-9)
                    text = f"{samples:,} samples, {triples:,} triples ({rate:,.0f} triples/s)"
                    bar.update(task, description=text)

                report = load_path(store, path, dataset, split=split, replace=replace, kb=kb, hops=hops,
                                   progress=progress, entity_names=entity_names,
                                   sample_edges=settings.kg_sample_edges)
        finally:
            store.close()
        console.print(
            f"dataset {report.dataset}: {report.samples_loaded:,} samples loaded, "
            f"{report.samples_replaced:,} replaced, {report.samples_skipped:,} skipped (already loaded), "
            f"{report.triples:,} triples "
            f"({report.duplicates_collapsed:,} duplicates collapsed) in {report.seconds:.1f}s "
            f"= {report.triples_per_s:,.0f} triples/s"
        )

    @kg.command("browse")
    def browse(
        dataset: str = typer.Argument(..., help="Dataset name (as loaded, e.g. webqsp)."),
        sample_id: str = typer.Argument(..., help="Sample id (as loaded, e.g. WebQTrn-0)."),
    ) -> None:
        """Write one sample's triples as KG_FACT edges (its subgraph for Neo4j Browser's
        cypher/browser/kg_sample.cypher), from its fact buckets; again: rewritten, never doubled."""
        from app.kg.browse import write_sample_edges

        settings = load_settings()
        server = embedded_server(settings).start() if settings.backend == "embedded" else None
        store = make_store(settings, server)
        try:
            edges = write_sample_edges(store, dataset, sample_id)
        finally:
            store.close()
        console.print(f"{dataset}/{sample_id}: {edges:,} KG_FACT edges written; in Neo4j Browser: "
                      f":param dataset => '{dataset}'; :param sample_id => '{sample_id}'; then "
                      "cypher/browser/kg_sample.cypher")

    cli.add_typer(kg, name="kg")
