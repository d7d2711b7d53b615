"""JSON Schemas of the bodies that routes parse by hand (/query, /ranking/preview, /retrieve).

Built from the settings, so the limits in the document are the limits the server applies: a body valid
against these schemas is accepted, one that is not gets a 4xx (the schemathesis test holds both ways).
"""

from __future__ import annotations

from typing import Any

from app.api.openapi.responses import REF, component
from app.core.config import Settings
from app.core.text import NONBLANK_IDENTIFIER_PATTERN, NONBLANK_TEXT_PATTERN, TEXT_PATTERN

ROLES = ["system", "user", "assistant"]
KG_FORMATS = ["", "seed", "legacy", "chat"]


def _question(settings: Settings, description: str) -> dict[str, Any]:
    return {"type": "string", "minLength": 1, "maxLength": settings.query_max_question_chars,
            "pattern": NONBLANK_TEXT_PATTERN, "description": description}


def _top_k(settings: Settings, default: int) -> dict[str, Any]:
    return {"type": ["integer", "null"], "minimum": 1, "maximum": settings.retrieval_max_top_k,
            "default": default, "description": "Sources to return (null: the default)."}


def _query(settings: Settings) -> dict[str, Any]:
    item_text = {"type": "string", "minLength": 1, "maxLength": settings.query_max_item_chars,
                 "pattern": NONBLANK_TEXT_PATTERN}
    context_object = {"type": "object", "required": ["text"], "properties": {
        "id": {"anyOf": [{"type": "string", "pattern": NONBLANK_IDENTIFIER_PATTERN}, {"type": "integer"}],
               "description": "Defaults to ext<N>."},
        "text": item_text,
        "score": {"type": ["number", "null"], "description": "Defaults to 1.0."}}}
    turn = {"type": "object", "required": ["role", "content"], "properties": {
        "role": {"enum": ROLES},
        "content": {"type": "string", "maxLength": settings.query_max_item_chars, "pattern": TEXT_PATTERN}}}
    return {"type": "object", "required": ["question"], "title": "QueryRequest", "properties": {
        "question": _question(settings, "The question (NEORAG_QUERY_MAX_QUESTION_CHARS)."),
        "stream": {"type": "boolean", "default": False,
                   "description": "true: text/plain chunks, then a [SOURCES] trailer."},
        "top_k": _top_k(settings, settings.retrieval_top_k),
        "context": {"type": ["array", "null"], "maxItems": settings.query_max_context_items,
                    "items": {"anyOf": [item_text, context_object]},
                    "description": "External context: strings or {id, text, score} objects."},
        "history": {"type": ["array", "null"], "maxItems": settings.query_max_history_items, "items": turn,
                    "description": "Earlier turns; a follow-up question is rewritten with them."},
        "include_graph": {"type": "boolean", "default": False,
                          "description": "true: keep the answer's evidence graph for "
                                         "GET /graph?answer=<id>."}},
        "example": {"question": "Who directed the film?", "stream": False, "top_k": 8,
                    "context": [{"id": "ext1", "text": "An external memo."}, "A plain snippet."],
                    "history": [{"role": "user", "content": "Tell me about the film."}],
                    "include_graph": False}}


def _preview(settings: Settings) -> dict[str, Any]:
    return {"type": "object", "required": ["question"], "title": "RankingPreviewRequest", "properties": {
        "question": _question(settings, "The question to score candidates for."),
        "top_k": _top_k(settings, settings.retrieval_top_k)},
        "example": {"question": "How does the approval flow progress?"}}


_KG_FIELD = "A string; a missing or non-string value is answered with a per-item error."


def _kg_action(_: Settings) -> dict[str, Any]:
    fields = {name: {"description": f"{what} {_KG_FIELD}"} for name, what in (
        ("action_type", "get_relations, get_head_relations, get_tail_entities, ... (GET /actions)."),
        ("dataset_name", "Loaded dataset, e.g. webqsp."), ("sample_id", "Sample id within the dataset."),
        ("entity_id", "Entity name (exact, else case-insensitive)."),
        ("relation", "Relation, for the *_entities actions."),
        ("concept", "First dotted segment, for get_conditional_relations."))}
    return {"type": "object", "title": "KGAction", "properties": fields,
            "description": "One KG-R1 action; unknown keys are ignored; an invalid item gets a per-item "
                           "error "
                           "and the rest of the batch is still answered.",
            "example": {"action_type": "get_relations", "dataset_name": "webqsp", "sample_id": "WebQTest-0",
                        "entity_id": "Justin Bieber"}}


def _passages(settings: Settings) -> dict[str, Any]:
    return {"type": "object", "required": ["query"], "title": "PassagesRequest", "properties": {
        "query": _question(settings, "The (sub-)query."),
        "top_k": _top_k(settings, settings.passages_top_k)},
        "example": {"query": "Who founded the company?"}}


def _retrieve(settings: Settings) -> dict[str, Any]:
    return {"title": "RetrieveRequest", "anyOf": [
        {"type": "array", "maxItems": settings.kg_max_batch, "items": {"$ref": REF + "KGAction"},
         "description": "KG-R1 actions: one answer per item, same order (NEORAG_KG_MAX_BATCH, else 413)."},
        {"$ref": REF + "PassagesRequest"}]}


QUERY_BODY = component("QueryRequest", _query)
PREVIEW_BODY = component("RankingPreviewRequest", _preview)
RETRIEVE_BODY = component("RetrieveRequest", _retrieve)
component("KGAction", _kg_action)
component("PassagesRequest", _passages)
RETRIEVE_PARAMETERS = [
    {"name": "format", "in": "query", "required": False, "schema": {"enum": KG_FORMATS, "default": "seed"},
     "description": "KG actions: `seed` (default) or `chat` (chat-completion shape with typed errors)."},
    {"name": "shape", "in": "query", "required": False, "schema": {"type": "string"},
     "description": "Passages: `list` answers a bare list instead of {chunks: [...]}; others: default."},
]
