"""The KG-R1 action vocabulary: names, aliases, required fields, per-item validation messages.

Pure functions over plain dicts (no store, no HTTP): the executor in :mod:`app.kg.service` uses them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


# kind: rel_both | rel_in | rel_out | rel_cond | ent_in | ent_out
@dataclass(frozen=True)
class ActionSpec:
    """One accepted ``action_type``."""

    name: str
    kind: str
    result_key: str
    description: str

    @property
    def needs(self) -> str | None:
        """The extra field this action requires beyond sample_id, dataset_name, entity_id."""
        if self.kind in ("ent_in", "ent_out"):
            return "relation"
        if self.kind == "rel_cond":
            return "concept"
        return None

    @property
    def required(self) -> list[str]:
        base = ["action_type", "dataset_name", "sample_id", "entity_id"]
        return base + ([self.needs] if self.needs else [])

    @property
    def optional(self) -> list[str]:
        return ["relation"] if self.needs is None else []


_DESC = {
    "rel_both": "relations touching the entity, both directions",
    "rel_in": "relations where the entity is the tail",
    "rel_out": "relations where the entity is the head",
    "ent_in": "heads h with (h, relation, entity)",
    "ent_out": "tails t with (entity, relation, t)",
    "rel_cond": "outgoing relations whose first dotted segment equals concept (case-insensitive)",
}
_TABLE = [
    ("get_relations", "rel_both", "relations"),
    ("get_head_relations", "rel_in", "relations"),
    ("get_relations_in", "rel_in", "relations"),
    ("get_tail_relations", "rel_out", "relations"),
    ("get_relations_out", "rel_out", "relations"),
    ("get_head_entities", "ent_in", "head_entities"),
    ("get_entities_in", "ent_in", "head_entities"),
    ("get_tail_entities", "ent_out", "tail_entities"),
    ("get_entities_out", "ent_out", "tail_entities"),
    ("get_conditional_relations", "rel_cond", "relations"),
]
ACTIONS: dict[str, ActionSpec] = {n: ActionSpec(n, k, key, _DESC[k]) for n, k, key in _TABLE}


@dataclass(frozen=True)
class Action:
    """A validated request item."""

    spec: ActionSpec
    dataset: str
    sample_id: str
    entity: str
    relation: str | None
    concept: str | None

    @property
    def sample_key(self) -> str:
        return f"{self.dataset}/{self.sample_id}"


def render_request(item: dict[str, Any]) -> str:
    """The request as the reference server prints it: Python repr of its known fields, in order.

    Fields: action_type, dataset_name, sample_id, entity_id, relation (None when absent), plus
    concept for get_conditional_relations; unknown keys are left out.
    """
    shown: dict[str, Any] = {k: item.get(k) for k in ("action_type", "dataset_name", "sample_id", "entity_id",
                                                       "relation")}
    if item.get("action_type") == "get_conditional_relations":
        shown["concept"] = item.get("concept")
    return repr(shown)


def _text(item: dict[str, Any], key: str) -> str | None:
    value = item.get(key)
    if isinstance(value, str) and value.strip():
        return value
    return None


def _missing_message(spec: ActionSpec, item: dict[str, Any]) -> str:
    if spec.needs:
        fields = f"sample_id, dataset_name, entity_id, and {spec.needs}"
    else:
        fields = "sample_id, dataset_name, and entity_id"
    return f"For {spec.name.upper()}, {fields} are required in request: {render_request(item)}"


def parse_item(item: dict[str, Any]) -> Action | str:
    """A validated :class:`Action`, or the per-item error message (the seed's wording)."""
    raw = item.get("action_type")
    if not isinstance(raw, str) or not raw.strip():
        return f"action_type is required in request: {render_request(item)}"
    spec = ACTIONS.get(raw.strip().lower())
    if spec is None:
        return (f"Unsupported action_type {raw!r}; supported: {', '.join(ACTIONS)}. "
                f"Request: {render_request(item)}")
    dataset, sample, entity = _text(item, "dataset_name"), _text(item, "sample_id"), _text(item, "entity_id")
    relation = _text(item, "relation")
    concept = _text(item, "concept")
    for key, value in (("dataset_name", dataset), ("sample_id", sample), ("entity_id", entity),
                       ("relation", relation), ("concept", concept)):
        if value is not None and "\x00" in value:  # the store cannot take it; other characters are looked up
            return f"{key} contains U+0000 (NUL), which no name holds. Request: {render_request(item)}"
    if dataset is None or sample is None or entity is None:
        return _missing_message(spec, item)
    if spec.needs == "relation" and relation is None:
        return _missing_message(spec, item)
    if spec.needs == "concept" and concept is None:
        return _missing_message(spec, item)
    return Action(spec, dataset, sample, entity, relation, concept)
