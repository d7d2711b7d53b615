"""The state one ingest run carries through its stages, and which LLM work the run does."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ingest.checkpoint import Checkpoint
from ingest.llm_extract import LLMIngest
from ingest.options import IngestOptions, IngestResult
from ingest.sources import SourcePlan
from ingest.write import GraphWriter

if TYPE_CHECKING:
    from app.core.config import Settings
    from app.services.container import Services

Progress = Callable[[dict[str, Any]], None]


def noop(_: dict[str, Any]) -> None:
    """A progress callback that drops every event."""
    return None


@dataclass
class RunContext:
    """Per-run state shared by the stages."""

    services: Services
    options: IngestOptions
    emit: Progress
    result: IngestResult
    writer: GraphWriter
    chunk_size: int
    overlap: int
    checkpoint: Checkpoint | None = None
    plans: dict[str, SourcePlan] = field(default_factory=dict)
    todo: dict[str, str] = field(default_factory=dict)  # chunk id -> "full" | "entities"
    touched_entities: set[str] = field(default_factory=set)
    touched_sources: set[str] = field(default_factory=set)
    processed: set[str] = field(default_factory=set)
    surfaces: set[str] = field(default_factory=set)
    keys: set[str] = field(default_factory=set)
    llm: LLMIngest | None = None  # the run's LLM work (ingest/llm_extract.py) when an LLM is used
    markdown_sections: bool = True
    stored_sources: dict[str, str | None] = field(default_factory=dict)  # path -> hash on its Source
    relocate: set[str] = field(default_factory=set)  # files whose stored chunks get their location rewritten
    removed_sources: set[str] = field(default_factory=set)  # files gone from an incremental directory ingest

    @property
    def settings(self) -> Settings:
        return self.services.settings


def llm_relations_enabled(services: Services, options: IngestOptions) -> bool:
    """Whether LLM REL extraction runs: the option, else the setting (auto = LLM configured)."""
    if options.llm_relations is not None:
        return bool(options.llm_relations) and services.llm is not None
    mode = services.settings.ingest_llm_relations
    return services.llm is not None and mode in ("auto", "on")


def llm_work(services: Services, options: IngestOptions, emit: Progress) -> LLMIngest | None:
    """The run's LLM work when it uses an LLM (entities in llm mode, or LLM relations), else None."""
    mode = options.entity_mode or services.settings.ingest_entity_mode
    relations = llm_relations_enabled(services, options)
    if services.llm is None or not (mode == "llm" or relations):
        return None
    return LLMIngest(services, services.llm, mode, relations, emit)
