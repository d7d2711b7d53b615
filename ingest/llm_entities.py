"""Entity extraction by the LLM, schema-constrained, used when ``ingest_entity_mode = llm``.

The reply is ``{"entities": [{"name": "<words of the text>", "type": "<one of the configured types>"}]}``
(``NEORAG_INGEST_ENTITY_TYPES``; at most ``max_items``). Names must occur in the chunk (case-insensitive);
others are dropped, and a reply whose every name is dropped counts as skipped. An older reply shape (a list
of strings) is still read: such names get the type ``CONCEPT`` (or the last configured type). A reply that
fails validation twice returns ``None``: the caller falls back to the deterministic extractor for that chunk.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from app.services.llm import LLMClient
from app.services.structured import ask
from ingest.entities import parse_llm_entities

PROMPT_VERSION = "entities-v4"
MAX_ITEMS = 12  # small models repeat themselves: more items are rarely new ones
MAX_TOKENS = 320
Name = Annotated[str, StringConstraints(min_length=1, max_length=80)]


@dataclass
class EntityOutcome:
    """Typed surface forms found in the chunk (None = skipped), how many names were dropped, and why."""

    entities: list[tuple[str, str]] | None
    dropped: int = 0
    error: str | None = None
    attempts: int = 0
    extra: dict[str, Any] = field(default_factory=dict)


@lru_cache(maxsize=64)
def entity_model(types: tuple[str, ...], max_items: int) -> type[BaseModel]:
    """The reply model: entity types as an enum, at most ``max_items`` entities."""
    type_enum = Literal.__getitem__(types)  # type: ignore[attr-defined]

    class Entity(BaseModel):
        model_config = ConfigDict(extra="forbid")
        name: Name
        type: type_enum  # type: ignore[valid-type]

    class EntityReply(BaseModel):
        model_config = ConfigDict(extra="forbid")
        entities: list[Entity] = Field(max_length=max_items)

    return EntityReply


def prompt(text: str, types: tuple[str, ...]) -> str:
    """The extraction prompt for one chunk. No worked example: SmolLM2-135M copied its names (Marie Curie,
    Warsaw) into 14 of 16 replies, which the in-text check then dropped (docs/BENCHMARKS.md, issue 15)."""
    return (
        "Extract the named entities (people, places, organisations, works, events, dates, quantities, key "
        "concepts) from the text below. Copy each name exactly as it is written in the text. Give each a "
        f"type from: {', '.join(types)}. Answer with JSON only.\n\nText:\n" + text
    )


def _legacy(types: tuple[str, ...]) -> Any:
    fallback = "CONCEPT" if "CONCEPT" in types else types[-1]

    def read(reply: str) -> Any:
        names = parse_llm_entities(reply)
        return None if names is None else {"entities": [{"name": n, "type": fallback} for n in names]}

    return read


def _prepare(types: tuple[str, ...]) -> Any:
    fallback = "CONCEPT" if "CONCEPT" in types else types[-1]

    def prepare(data: Any) -> Any:
        if isinstance(data, list):
            data = {"entities": data}
        if isinstance(data, dict) and isinstance(data.get("entities"), list):
            data = {**data, "entities": [{"name": e, "type": fallback} if isinstance(e, str) else e
                                         for e in data["entities"]]}
        return data

    return prepare


def in_text(name: str, text: str) -> bool:
    """Whether ``name`` occurs in ``text`` (case-insensitive, whitespace collapsed)."""
    folded = " ".join(name.split()).casefold()
    return bool(folded) and folded in " ".join(text.split()).casefold()


def extract_llm(llm: LLMClient, text: str, types: tuple[str, ...], max_items: int = 20,
                truncate: int = 2000, temperature: float | None = None) -> EntityOutcome:
    """Typed entities named by the LLM; LLMUnavailable on an endpoint failure (the caller falls back)."""
    body = text[:truncate]
    res = ask(llm, [{"role": "user", "content": prompt(body, types)}], entity_model(types, max_items),
              task="entities", max_tokens=MAX_TOKENS, temperature=temperature, legacy=_legacy(types),
              prepare=_prepare(types))
    if res.value is None:
        return EntityOutcome(None, error=f"malformed_json: {res.error}", attempts=res.attempts)
    found: list[tuple[str, str]] = []
    seen: set[str] = set()
    dropped = 0
    for ent in res.value.entities:  # type: ignore[attr-defined]
        name = " ".join(ent.name.split())
        if name.casefold() in seen:  # small models repeat a name under every type: the first one counts
            continue
        if in_text(name, body):
            found.append((name, str(ent.type)))
            seen.add(name.casefold())
        else:
            dropped += 1
    if dropped and not found:  # every name was made up: nothing usable, the caller falls back
        return EntityOutcome(None, dropped, "no_entity_in_text: no name the model gave occurs in the chunk",
                             res.attempts)
    return EntityOutcome(found, dropped, attempts=res.attempts)
