"""Typed options and result of one ingest run."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class IngestOptions:
    """What an ingest run should do (HTTP query parameters map onto these fields).

    ``None`` for a tunable means "use the setting".
    """

    incremental: bool = False          # skip chunks already stored with the same content hash
    refresh: bool = False              # rebuild entities/relations of existing chunks, ignore checkpoint
    refresh_relations: bool = True     # with refresh: re-run LLM relation extraction too
    checkpoint: bool = True            # write/read .ingest_ck_<basename>.json and skip finished work
    # relations-only incremental mode (semantic patch)
    inc_rel_only: bool = False
    new_after: str | None = None       # last old chunk id (exclusive boundary)
    detect_after: bool = False         # with new_count: the last new_count chunks are new
    new_count: int | None = None
    rel_window: int | None = None
    rel_truncate: int | None = None
    rel_temperature: float | None = None
    # overrides (None = settings)
    llm_relations: bool | None = None  # LLM REL edges (default: setting ingest_llm_relations)
    entity_mode: str | None = None     # "heuristic" | "llm"
    chunk_size: int | None = None
    chunk_overlap: int | None = None
    batch_size: int | None = None
    markdown_sections: bool | None = None  # chunk Markdown by section (default: ingest_markdown_sections)


@dataclass
class IngestResult:
    """Counts of one ingest run (the seed's fields first, then extras)."""

    files_processed: int = 0
    chunks_new: int = 0
    chunks_skipped: int = 0
    entities_created: int = 0
    relations_created: int = 0
    cooccur_edges: int = 0
    llm_rel_edges: int = 0
    elapsed_sec: float = 0.0
    incremental: bool = False
    # extras
    chunks_total: int = 0
    chunks_deleted: int = 0
    documents: int = 0
    relates_to_edges: int = 0
    files_failed: int = 0
    replaced_chars: int = 0
    entity_surface_forms: int = 0
    entity_keys: int = 0
    llm_rel_errors: int = 0
    llm_entity_errors: int = 0
    errors: list[dict[str, str]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        """Plain JSON-ready dict."""
        out = asdict(self)
        out["elapsed_sec"] = round(self.elapsed_sec, 3)
        return out


@dataclass
class RelationsOnlyResult:
    """Result of the relations-only incremental mode (``mode = relations_incremental``)."""

    created: int = 0
    skipped: int = 0
    pairs: int = 0
    old: int = 0
    new: int = 0
    errors: int = 0
    elapsed_sec: float = 0.0
    mode: str = "relations_incremental"

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["elapsed_sec"] = round(self.elapsed_sec, 3)
        return out
