"""KG-R1 chat answers, word for word: request checks, observation texts and the answer object.

A KG-R1 policy is trained on ``choices[0].message.content`` of KG-R1's retrieval server
(github:Jinyeop3110/KG-R1, ``kg_r1/search``), so ``?format=chat`` reproduces its texts, error types and
answer object exactly (tests/fixtures/kg_r1_golden holds its recorded answers). Pure functions: the
executor is :mod:`app.kg.chat`. Deliberate differences, each where the real server refuses or breaks:

- an item its pydantic model rejects (unknown action, missing ``dataset_name``, a non-string field) makes
  it answer HTTP 422 for the whole batch; here only that item fails, ``KG_FORMAT_ERROR``, with the first
  pydantic message as content (the text its client shows for every item of such a batch);
- the legacy names ``get_head_relations``, ``get_tail_relations``, ``get_head_entities``,
  ``get_tail_entities`` are answered as ``get_relations_in`` / ``_out``, ``get_entities_in`` / ``_out``
  (its code maps them so, but its enum rejects them: 422);
- ``Action "x" not available`` names the action as Python 3.10 prints it (its documented environment).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import Any

from app.core.config import KG_R1_ACTIONS, KG_R1_LEGACY
from app.kg.actions import ACTIONS as SPEC_TABLE

SUCCESS, NO_RESULTS, FORMAT_ERROR = "KG_SUCCESS", "KG_NO_RESULTS", "KG_FORMAT_ERROR"
SAMPLE_NOT_FOUND, ENTITY_NOT_FOUND = "KG_SAMPLE_NOT_FOUND", "KG_ENTITY_NOT_FOUND"
RELATION_NOT_FOUND, SERVER_ERROR = "KG_RELATION_NOT_FOUND", "KG_SERVER_ERROR"

ACTIONS = KG_R1_ACTIONS  # its registry order (GET /actions lists them so)
LEGACY = KG_R1_LEGACY
SPECS = {name: SPEC_TABLE[name] for name in ACTIONS}  # NeoRAG's action table, KG-R1's names only
KIND = {name: spec.kind for name, spec in SPECS.items()}
ENUM_MESSAGE = ("Input should be 'get_relations_in', 'get_relations_out', 'get_entities_in', "
                "'get_entities_out', 'get_conditional_relations', 'get_relations', 'get_relations_in', "
                "'get_relations_out', 'get_entities_in' or 'get_entities_out'")
DEPRECATED = "[DEPRECATED: Use get_head_relations() or get_tail_relations()]"
_STR_FIELDS = ("sample_id", "entity_id", "relation", "concept")
_FIELD_NAMES = {"relation": "relation_name",
                "concept": "concept (e.g., 'people', 'location', 'organization')"}


@dataclass(frozen=True)
class ChatRequest:
    """An item that passed the request checks (``action``: the canonical name)."""

    action: str
    dataset: str
    sample_id: str
    entity: str
    relation: str | None
    concept: str | None

    @property
    def kind(self) -> str:
        return KIND[self.action]


@dataclass(frozen=True)
class Observation:
    """What one item answers: content, error type, the ``action`` field, whether ``query_time`` is set."""

    content: str
    error_type: str
    action: str | None
    timed: bool = True


def check_item(item: dict[str, Any]) -> ChatRequest | Observation:
    """The request checks the real server makes before touching data: its pydantic model, then the
    required fields of the action (``Missing required fields for <action>: <fields>.``)."""
    raw = item.get("action_type")
    if "action_type" not in item:
        return Observation("Field required", FORMAT_ERROR, None, timed=False)
    action = LEGACY.get(raw, raw) if isinstance(raw, str) else None
    if action not in KIND:
        return Observation(ENUM_MESSAGE, FORMAT_ERROR, raw if isinstance(raw, str) else None, timed=False)
    assert action is not None
    if "dataset_name" not in item:
        return Observation("Field required", FORMAT_ERROR, action, timed=False)
    if not isinstance(item["dataset_name"], str) or any(
            item.get(k) is not None and not isinstance(item[k], str) for k in _STR_FIELDS):
        return Observation("Input should be a valid string", FORMAT_ERROR, action, timed=False)
    missing = [_field_name(action, f) for f in ("sample_id", "dataset_name", "entity_id", SPECS[action].needs)
               if f is not None and not item.get(f)]
    if missing:
        return Observation(f"Missing required fields for {action}: {', '.join(missing)}.", FORMAT_ERROR,
                           action, timed=False)
    for key in ("dataset_name", "sample_id", "entity_id", "relation", "concept"):
        value = item.get(key)
        if isinstance(value, str) and "\x00" in value:  # the store cannot take it
            return Observation(f"{key} contains U+0000 (NUL), which no name holds.", FORMAT_ERROR, action,
                               timed=False)
    return ChatRequest(action, item["dataset_name"], item["sample_id"], item["entity_id"],
                       item.get("relation"), item.get("concept"))


def _field_name(action: str, field: str) -> str:
    if field == "entity_id" and action == "get_entities_in":
        return "entity_id (tail entity)"
    if field == "entity_id" and action == "get_entities_out":
        return "entity_id (head entity)"
    return _FIELD_NAMES.get(field, field)


def clean(value: str) -> str:
    """How the real server quotes a name in its texts: surrounding ``"`` then ``'`` stripped."""
    return value.strip('"').strip("'")


def dataset_not_supported(dataset: str, available: list[str]) -> Observation:
    return Observation(f'Dataset "{dataset}" not supported (available: {", ".join(available)})', SERVER_ERROR,
                       "server_error")


def action_not_available(action: str, enabled: list[str]) -> Observation:
    return Observation(f'Action "{action}" not available (use: {", ".join(enabled)})', SERVER_ERROR,
                       "server_error")


def extra_argument(req: ChatRequest) -> Observation | None:
    """Its handlers' strict check: a relation given to a relation-listing action (not get_relations)."""
    if not req.relation or req.action in ("get_relations", "get_entities_in", "get_entities_out"):
        return None
    if req.action == "get_conditional_relations":
        return Observation("get_conditional_relations accepts entity and concept arguments only",
                           FORMAT_ERROR, req.action)
    return Observation(f"{req.action} accepts only one entity argument", FORMAT_ERROR, req.action)


def sample_not_found(req: ChatRequest) -> Observation:
    return Observation(f'Sample "{req.sample_id}" not found in KG', SAMPLE_NOT_FOUND, req.action)


def entity_not_found(req: ChatRequest) -> Observation:
    return Observation(f'Entity "{clean(req.entity)}" not found in KG', ENTITY_NOT_FOUND, req.action)


def relation_not_found(req: ChatRequest) -> Observation:
    return Observation(f'Relation "{clean(req.relation or "")}" not found in KG', RELATION_NOT_FOUND,
                       req.action)


def relations_found(req: ChatRequest, formatted: str) -> Observation:
    """A relation-listing answer: ``formatted`` is the written list (empty: nothing found). The
    conditional action joins its sorted list with ", " whatever the relation format."""
    who, action = clean(req.entity), req.action
    if req.kind == "rel_cond":
        concept = clean(req.concept or "")
        if formatted:
            return Observation(f'Relations for entity "{who}" with concept "{concept}": {formatted}', SUCCESS,
                               action)
        text = f'No relations found for entity "{who}" with concept "{concept}" in knowledge graph'
    elif req.kind == "rel_both":
        if formatted:
            return Observation(f'Relations for entity "{who}" {DEPRECATED}:\n{formatted}', SUCCESS, action)
        text = f'No relations found for entity "{who}" in knowledge graph {DEPRECATED}'
    else:
        side = "Incoming" if req.kind == "rel_in" else "Outgoing"
        if formatted:
            return Observation(f'{side} relations for entity "{who}":\n{formatted}', SUCCESS, action)
        text = f'No {side.lower()} relations found for entity "{who}" in knowledge graph'
    return Observation(text, NO_RESULTS, action)


def entities_found(req: ChatRequest, names: list[str]) -> Observation:
    """An entity-listing answer (``names`` sorted, a name repeated once per KG-R1 entry carrying it)."""
    who, rel = clean(req.entity), req.relation
    way, prep = ("incoming", "to") if req.kind == "ent_in" else ("outgoing", "from")
    if names:
        return Observation(f'Entities {way} via relation "{rel}" {prep} "{who}": {", ".join(names)}', SUCCESS,
                           req.action)
    return Observation(f'No entities found {way} via relation "{rel}" {prep} "{who}" in knowledge graph',
                       NO_RESULTS, req.action)


def answer(obs: Observation, query_time: float) -> dict[str, Any]:
    """The real server's answer object for one item (``query_time`` only where it sets one)."""
    ok = obs.error_type == SUCCESS
    now = time.time()
    out: dict[str, Any] = {
        "id": "chatcmpl-" + os.urandom(12).hex(), "object": "kg_retrieval", "created": int(now),
        "model": "kg-retrieval", "success": ok, "action": obs.action,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": obs.content}, "logprobs": None,
                     "finish_reason": "stop" if ok else "error"}],
        "usage": {}, "system_fingerprint": "",
        "kg_metadata": {"action_type": obs.action, "success": ok, "error_type": obs.error_type,
                        "timestamp": now},
    }
    if obs.timed:
        out["query_time"] = query_time
    return out


def actions_listing(enabled: list[str], datasets: list[str]) -> dict[str, Any]:
    """``GET /actions`` as the real server answers it (its client reads ``actions`` as a list of names)."""
    details = {name: dict(_DETAILS[name]) for name in enabled}
    return {"actions": list(enabled), "supported_actions": list(enabled), "supported_kgs": datasets,
            "action_details": details}


_BASE = ["sample_id", "dataset_name", "entity_id"]
_DETAILS: dict[str, dict[str, Any]] = {
    "get_relations": {"description": "Get all relations for a given entity (DEPRECATED - use "
                                     "get_head_relations or get_tail_relations)",
                      "required_fields": _BASE, "deprecated": True},
    "get_relations_in": {"description": "Get relations where the entity is the tail (object)",
                         "required_fields": _BASE},
    "get_relations_out": {"description": "Get relations where the entity is the head (subject)",
                          "required_fields": _BASE},
    "get_entities_in": {"description": "Get head entities for a given tail entity and relation",
                        "required_fields": [*_BASE, "relation"]},
    "get_entities_out": {"description": "Get tail entities for a given head entity and relation",
                         "required_fields": [*_BASE, "relation"]},
    "get_conditional_relations": {"description": "Get relations for a given entity filtered by concept "
                                               "(e.g., 'people', 'location', 'organization')",
                                  "required_fields": [*_BASE, "concept"]},
}
