"""The bulk KG import behind ``neorag kg load --bulk`` and ``neorag neo4j import`` (one implementation)."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

import typer

from app.core.config import Settings
from app.core.errors import ConfigError

LOCAL_HOSTS = ("localhost", "127.0.0.1", "::1")


def require_local_neo4j(settings: Settings) -> None:
    """``kg load --bulk`` writes the data dir of ``neorag neo4j``: refuse (one line) any other backend."""
    if settings.backend != "neo4j":
        raise ConfigError("--bulk imports into a local Neo4j database",
                          f"NEORAG_BACKEND is {settings.backend!r}",
                          "set NEORAG_BACKEND=neo4j (the `neorag neo4j` data dir), or load without --bulk")
    host = urlsplit(settings.neo4j_uri).hostname or ""
    if host not in LOCAL_HOSTS:
        raise ConfigError("--bulk imports into the local `neorag neo4j` data dir",
                          f"NEORAG_NEO4J_URI points to {host}",
                          "run it on that server's machine, or load without --bulk")


def run_bulk(settings: Settings, path: Path, dataset: str, data_dir: Path | None = None,
             split: str | None = None, kb: Path | None = None, hops: int | None = None,
             entity_names: str = "auto", force: bool = False) -> None:
    """Bulk-load ``path`` into the local Neo4j's database and print what happened."""
    from app.store.neo4j_server import server_from_settings
    from ingest.kg.bulk_load import bulk_load_path

    server = server_from_settings(settings, data_dir)
    result = bulk_load_path(server, settings, path, dataset, split=split, kb=kb, hops=hops,
                            entity_names=entity_names, force=force)
    report = result.report
    for where, reason in report.problems:
        typer.echo(f"skipped: {where}: {reason}", err=True)
    if report.samples_rejected > len(report.problems):
        typer.echo(f"skipped: {report.samples_rejected - len(report.problems):,} more bad samples", err=True)
    typer.echo(
        f"dataset {report.dataset}: {report.samples_loaded:,} samples imported, "
        f"{report.samples_skipped:,} skipped (id seen before), "
        f"{report.samples_rejected:,} skipped (bad input), "
        f"{report.distinct_triples:,} distinct triples ({report.triples:,} per sample, "
        f"{report.duplicates_collapsed:,} duplicates collapsed), {report.entities:,} entities "
        f"in {result.seconds:.1f}s = {result.triples_per_s:,.0f} triples/s "
        f"(CSV {result.csv_seconds:.1f}s, import {result.import_seconds:.1f}s)")
    if result.kept is not None:
        typer.echo(f"the previous database files were kept in {result.kept}")
    typer.echo(f"Neo4j serves it at {result.info.uri} (data {result.info.data_dir}); "
               f"`neorag neo4j stop --data-dir {result.info.data_dir}` stops it")
