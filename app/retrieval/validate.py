"""Validation of /query and /ranking/preview inputs (BadInput -> 422 naming the field)."""

from __future__ import annotations

import math
from typing import Any

from app.core.config import Settings
from app.core.errors import BadInput
from app.core.text import identifier_problem, text_problem
from app.retrieval.answer import ContextItem

ROLES = ("system", "user", "assistant")


def question(settings: Settings, value: Any, field: str = "question") -> str:
    """A non-empty question within the length limit (stripped)."""
    if not isinstance(value, str):
        raise BadInput(f"{field}: must be a string", field=field)
    if len(value) > settings.query_max_question_chars:
        raise BadInput(
            f"{field}: is {len(value)} characters, the limit is {settings.query_max_question_chars} "
            "(NEORAG_QUERY_MAX_QUESTION_CHARS)",
            field=field,
        )
    _clean_text(value, field)
    text = value.strip()
    if not text:
        raise BadInput(f"{field}: must not be empty or whitespace", field=field)
    return text


def _clean_text(value: str, field: str, limit: int | None = None) -> str:
    """``value`` when it holds no forbidden control character and fits ``limit`` characters."""
    problem = text_problem(value)
    if problem:
        raise BadInput(f"{field}: {problem}; only tab, line feed and carriage return are allowed",
                       field=field)
    if limit is not None and len(value) > limit:
        raise BadInput(f"{field}: is {len(value)} characters, the limit is {limit} "
                       "(NEORAG_QUERY_MAX_ITEM_CHARS)", field=field)
    return value


def top_k(settings: Settings, value: Any, default: int, field: str = "top_k") -> int:
    """An integer in 1..retrieval_max_top_k, or the default when absent."""
    if value is None:
        return default
    if isinstance(value, float) and value.is_integer():  # 3.0 is an integer to JSON (and its schema)
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise BadInput(f"{field}: must be an integer", field=field)
    if not 1 <= value <= settings.retrieval_max_top_k:
        raise BadInput(
            f"{field}: must be between 1 and {settings.retrieval_max_top_k}, got {value}", field=field
        )
    return value


def _bounded_list(value: Any, name: str, shape: str, limit: int) -> list[Any]:
    """``value`` as a list of at most ``limit`` items (None: empty); else a 4xx naming ``name``."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise BadInput(f"{name}: must be a list of {shape}", field=name)
    if len(value) > limit:
        raise BadInput(f"{name}: at most {limit} items", field=name)
    return value


def context(settings: Settings, value: Any) -> list[ContextItem]:
    """External context: strings or {id?, text, score?} objects."""
    value = _bounded_list(value, "context", "strings or {id, text, score?} objects",
                          settings.query_max_context_items)
    items = []
    for i, item in enumerate(value):
        field = f"context[{i}]"
        if isinstance(item, str):
            _clean_text(item, field, settings.query_max_item_chars)
            if not item.strip():
                raise BadInput(f"{field}: must not be empty", field=field)
            items.append(ContextItem(f"ext{i + 1}", item.strip()))
            continue
        if not isinstance(item, dict):
            raise BadInput(f"{field}: must be a string or an object {{id, text, score?}}", field=field)
        text = item.get("text")
        if isinstance(text, str):
            _clean_text(text, f"{field}.text", settings.query_max_item_chars)
        if not isinstance(text, str) or not text.strip():
            raise BadInput(f"{field}.text: required non-empty string", field=f"{field}.text")
        cid = item.get("id", f"ext{i + 1}")
        if not isinstance(cid, str | int) or isinstance(cid, bool) or not str(cid).strip():
            raise BadInput(f"{field}.id: must be a non-empty string", field=f"{field}.id")
        if isinstance(cid, str) and (problem := identifier_problem(cid)):
            raise BadInput(f"{field}.id: {problem}", field=f"{field}.id")
        score = item.get("score")
        if score is not None and (isinstance(score, bool) or not isinstance(score, int | float)
                                  or not math.isfinite(score)):
            raise BadInput(f"{field}.score: must be a finite number", field=f"{field}.score")
        items.append(ContextItem(str(cid), text.strip(), None if score is None else float(score)))
    return items


def history(settings: Settings, value: Any) -> list[dict[str, str]]:
    """Conversation turns {role: system|user|assistant, content: str}."""
    value = _bounded_list(value, "history", "{role, content} objects", settings.query_max_history_items)
    out = []
    for i, item in enumerate(value):
        field = f"history[{i}]"
        if not isinstance(item, dict):
            raise BadInput(f"{field}: must be an object {{role, content}}", field=field)
        role, content = item.get("role"), item.get("content")
        if role not in ROLES:
            raise BadInput(f"{field}.role: must be one of system, user, assistant", field=f"{field}.role")
        if not isinstance(content, str):
            raise BadInput(f"{field}.content: must be a string", field=f"{field}.content")
        _clean_text(content, f"{field}.content", settings.query_max_item_chars)
        out.append({"role": str(role), "content": content})
    return out
