"""LLM-typed semantic relations between chunk pairs (``REL {type, confidence}``).

The LLM sees two chunk texts (truncated) and answers JSON
``{"relations": [{"type": "CAUSES", "direction": "A->B", "confidence": 0.8}]}``, constrained by a schema
(``type`` an enum of the eight known types, ``direction`` ``A->B`` or ``B->A``).
Without a grammar an object or a bare list is accepted too: types outside the eight are mapped through
``TYPE_ALIASES`` or dropped; confidence is clamped to [0, 1] (missing -> 0.5). A malformed reply is retried
once, then the pair is skipped and counted; an endpoint error is counted too. Nothing here raises.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from app.core.errors import LLMUnavailable
from app.services.llm import LLMClient
from app.services.structured import ask

REL_TYPES = ("STEP_NEXT", "REFERENCES", "FOLLOWS", "CAUSES", "SUPPORTS", "PART_OF", "SUBSTEP_OF", "CONTRASTS")
TYPE_ALIASES = {
    "NEXT": "STEP_NEXT", "NEXT_STEP": "STEP_NEXT", "THEN": "STEP_NEXT", "PRECEDES": "STEP_NEXT",
    "REFERENCE": "REFERENCES", "REFERS_TO": "REFERENCES", "CITES": "REFERENCES", "MENTIONS": "REFERENCES",
    "FOLLOW": "FOLLOWS", "AFTER": "FOLLOWS", "CONTINUES": "FOLLOWS",
    "CAUSE": "CAUSES", "LEADS_TO": "CAUSES", "RESULTS_IN": "CAUSES", "CAUSED_BY": "CAUSES",
    "SUPPORT": "SUPPORTS", "EVIDENCE": "SUPPORTS", "CONFIRMS": "SUPPORTS", "ELABORATES": "SUPPORTS",
    "PART": "PART_OF", "PARTOF": "PART_OF", "COMPONENT_OF": "PART_OF", "BELONGS_TO": "PART_OF",
    "SUBSTEP": "SUBSTEP_OF", "SUB_STEP_OF": "SUBSTEP_OF",
    "CONTRAST": "CONTRASTS", "CONTRADICTS": "CONTRASTS", "OPPOSES": "CONTRASTS", "CONFLICTS": "CONTRASTS",
}
NO_RELATION = {"NONE", "NO_RELATION", "UNRELATED", "NULL", ""}

REL_PROMPT = (
    "You label semantic relations between two text chunks A and B. Allowed types: "
    + ", ".join(REL_TYPES)
    + ". Answer with JSON only: {\"relations\": [{\"type\": \"<TYPE>\", \"direction\": \"A->B\" or "
    "\"B->A\", \"confidence\": <0..1>}]} and an empty list when they are unrelated.\n\n"
)
PROMPT_VERSION = "chunk-pairs-v2"
MAX_TOKENS = 160


class PairRelation(BaseModel):
    """One relation of a pair as the schema allows it."""

    model_config = ConfigDict(extra="forbid")
    type: Literal[REL_TYPES]  # type: ignore[valid-type]
    direction: Literal["A->B", "B->A"]
    confidence: float = Field(ge=0.0, le=1.0)


class PairReply(BaseModel):
    """The reply for one pair (at most four relations)."""

    model_config = ConfigDict(extra="forbid")
    relations: list[PairRelation] = Field(max_length=4)


class MalformedReply(ValueError):
    """The LLM reply is not the expected JSON."""


@dataclass
class TypedRelation:
    """One relation between the chunks of a pair, oriented."""

    src: str
    dst: str
    type: str
    confidence: float


@dataclass
class PairOutcome:
    """What one pair produced."""

    relations: list[TypedRelation] = field(default_factory=list)
    error: str | None = None
    dropped: int = 0


def map_type(raw: object) -> str | None:
    """A known REL type, or None when unknown / no relation."""
    if not isinstance(raw, str):
        return None
    key = re.sub(r"[\s\-]+", "_", raw.strip().upper())
    if key in NO_RELATION:
        return None
    if key in REL_TYPES:
        return key
    return TYPE_ALIASES.get(key)


def clamp_confidence(raw: object) -> float:
    """Confidence in [0, 1]; 0.5 when missing or not a number."""
    try:
        value = float(raw)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return 0.5
    if value != value:  # NaN
        return 0.5
    return max(0.0, min(1.0, value))


def parse_reply(text: str) -> list[dict[str, object]]:
    """The relation objects of a reply; raises MalformedReply."""
    body = text.strip()
    if body.startswith("```"):
        body = body.strip("`")
        body = body[body.find("\n") + 1:] if "\n" in body else body
    starts = [i for i in (body.find("{"), body.find("[")) if i >= 0]
    if not starts:
        raise MalformedReply("no JSON in reply")
    try:
        data, _ = json.JSONDecoder().raw_decode(body[min(starts):])
    except json.JSONDecodeError as exc:
        raise MalformedReply(f"invalid JSON: {exc.msg}") from exc
    if isinstance(data, dict):
        items = data.get("relations", [data] if "type" in data else None)
    else:
        items = data
    if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
        raise MalformedReply("JSON has no relations list")
    return items


def to_relations(items: list[dict[str, object]], a: str, b: str) -> tuple[list[TypedRelation], int]:
    """Typed, oriented, de-duplicated relations (highest confidence per type); and how many were dropped."""
    best: dict[tuple[str, str, str], TypedRelation] = {}
    dropped = 0
    for item in items:
        rel_type = map_type(item.get("type"))
        if rel_type is None:
            dropped += 1
            continue
        direction = str(item.get("direction", "A->B")).replace(" ", "").upper()
        src, dst = (b, a) if direction in ("B->A", "BA", "B_TO_A") else (a, b)
        rel = TypedRelation(src, dst, rel_type, clamp_confidence(item.get("confidence")))
        key = (src, dst, rel_type)
        if key not in best or best[key].confidence < rel.confidence:
            best[key] = rel
    return list(best.values()), dropped


def normalise_items(data: Any) -> tuple[Any, int]:
    """A reply in the schema's shape: known types only (aliases mapped, others dropped and counted), a
    direction (default A->B) and a clamped confidence. Anything unreadable is passed on to fail validation."""
    if isinstance(data, list):
        items: Any = data
    elif isinstance(data, dict):
        items = data.get("relations", [data] if "type" in data else None)
    else:
        return data, 0
    if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
        return data, 0
    kept, dropped = [], 0
    for item in items:
        rel_type = map_type(item.get("type"))
        if rel_type is None:
            dropped += 1
            continue
        direction = str(item.get("direction", "A->B")).replace(" ", "").upper()
        reverse = direction in ("B->A", "BA", "B_TO_A")
        kept.append({"type": rel_type, "direction": "B->A" if reverse else "A->B",
                     "confidence": clamp_confidence(item.get("confidence"))})
    return {"relations": kept}, dropped


def _legacy(reply: str) -> Any:
    try:
        return {"relations": parse_reply(reply)}
    except MalformedReply:
        return None


def label_pair(llm: LLMClient, a_id: str, a_text: str, b_id: str, b_text: str, truncate: int,
               temperature: float | None = None,
               on_retry: Callable[[str], None] | None = None) -> PairOutcome:
    """Ask the LLM about one pair (schema-constrained, one retry); never raises."""
    prompt = REL_PROMPT + f"A:\n{a_text[:truncate]}\n\nB:\n{b_text[:truncate]}"
    dropped = 0

    def prepare(data: Any) -> Any:
        nonlocal dropped
        data, dropped = normalise_items(data)
        return data

    try:
        res = ask(llm, [{"role": "user", "content": prompt}], PairReply, task="chunk_relations",
                  max_tokens=MAX_TOKENS, temperature=temperature, legacy=_legacy, prepare=prepare)
    except LLMUnavailable as exc:
        return PairOutcome(error=f"llm_error: {exc.why or exc.what}"[:300])
    if res.attempts > 1 and on_retry:
        on_retry(res.error or "retried")
    if res.value is None:
        return PairOutcome(error=f"malformed_json: {res.error}"[:300])
    rels: dict[tuple[str, str, str], TypedRelation] = {}
    for rel in res.value.relations:  # type: ignore[attr-defined]
        src, dst = (b_id, a_id) if rel.direction == "B->A" else (a_id, b_id)
        key = (src, dst, rel.type)
        if key not in rels or rels[key].confidence < rel.confidence:
            rels[key] = TypedRelation(src, dst, rel.type, float(rel.confidence))
    return PairOutcome(list(rels.values()), None, dropped)


def window_pairs(ids: list[str], window: int, new_from: int = 0) -> list[tuple[str, str]]:
    """Pairs (i, j), i < j <= i + window, with j >= new_from (new-new and tail-old to early-new)."""
    out = []
    for j in range(max(new_from, 1), len(ids)):
        for i in range(max(0, j - window), j):
            out.append((ids[i], ids[j]))
    return out
