"""Typed relations between the entities of one chunk (LLM): ``(Entity)-[:REL {type, chunks}]->(Entity)``.

The reply is ``{"relations": [{"source": "<entity>", "type": "<TYPE>", "target": "<entity>"}]}`` where
``source`` and ``target`` are enums of the chunk's own entity names (so an endpoint is always an entity of
the chunk) and ``type`` an enum of ``NEORAG_INGEST_RELATION_TYPES`` (the allow-list: a type from model
text is never written unchecked). Self-relations are dropped. A reply that fails validation twice is
skipped (``relations=None``).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from app.services.llm import LLMClient
from app.services.structured import ask

PROMPT_VERSION = "entity-relations-v1"
MAX_TOKENS = 360
MAX_ENTITIES = 16  # names offered per chunk (the enum and the prompt stay small)


@dataclass(frozen=True)
class EntityRelation:
    """One relation between two entity keys, found in ``chunk``."""

    source: str
    target: str
    type: str
    chunk: str


@dataclass
class RelationOutcome:
    """(source name, type, target name) triples (None = skipped) and why."""

    triples: list[tuple[str, str, str]] | None
    dropped: int = 0
    error: str | None = None
    attempts: int = 0


@lru_cache(maxsize=256)
def relation_model(names: tuple[str, ...], types: tuple[str, ...], max_items: int) -> type[BaseModel]:
    """The reply model: endpoints an enum of the chunk's entity names, types an enum of the allow-list."""
    name_enum = Literal.__getitem__(names)  # type: ignore[attr-defined]
    type_enum = Literal.__getitem__(types)  # type: ignore[attr-defined]

    class Relation(BaseModel):
        model_config = ConfigDict(extra="forbid")
        source: name_enum  # type: ignore[valid-type]
        type: type_enum  # type: ignore[valid-type]
        target: name_enum  # type: ignore[valid-type]

    class RelationReply(BaseModel):
        model_config = ConfigDict(extra="forbid")
        relations: list[Relation] = Field(max_length=max_items)

    return RelationReply


def prompt(text: str, names: tuple[str, ...], types: tuple[str, ...]) -> str:
    """The relation prompt for one chunk and its entities."""
    return (
        "List the relations the text states between these entities: " + "; ".join(names) + ". "
        f"Use only these relation types: {', '.join(types)}. Copy entity names exactly; leave the list "
        'empty when the text states none. Answer with JSON only: {"relations": [{"source": "<entity>", '
        '"type": "<TYPE>", "target": "<entity>"}]}\n\nText:\n' + text
    )


def extract_relations(llm: LLMClient, text: str, names: tuple[str, ...], types: tuple[str, ...],
                      max_items: int = 8, truncate: int = 2000,
                      temperature: float | None = None) -> RelationOutcome:
    """Relations among ``names`` stated in ``text``; raises LLMUnavailable on an endpoint failure."""
    names = tuple(dict.fromkeys(names))[:MAX_ENTITIES]
    if len(names) < 2:
        return RelationOutcome([])
    res = ask(llm, [{"role": "user", "content": prompt(text[:truncate], names, types)}],
              relation_model(names, types, max_items), task="entity_relations", max_tokens=MAX_TOKENS,
              temperature=temperature)
    if res.value is None:
        return RelationOutcome(None, error=f"malformed_json: {res.error}", attempts=res.attempts)
    triples: list[tuple[str, str, str]] = []
    dropped = 0
    for rel in res.value.relations:  # type: ignore[attr-defined]
        triple = (str(rel.source), str(rel.type), str(rel.target))
        if triple[0] == triple[2] or triple in triples:
            dropped += 1
        else:
            triples.append(triple)
    return RelationOutcome(triples, dropped, attempts=res.attempts)
