"""Entity and relation type names: defaults and the one check that makes them safe allow-list values.

Types configured by a user (``NEORAG_INGEST_ENTITY_TYPES`` / ``NEORAG_INGEST_RELATION_TYPES``) become the
enums of the LLM's reply schema and the allow-list every written ``REL.type`` is checked against. They are
upper-case identifiers (``^[A-Z][A-Z0-9_]*$``, at most 48 characters), so even a statement that used one as
a label or relationship type could not be injected; NeoRAG stores them as property values only.
"""

from __future__ import annotations

import json
import re

DEFAULT_ENTITY_TYPES = ("PERSON", "ORGANIZATION", "LOCATION", "EVENT", "WORK", "DATE", "QUANTITY", "CONCEPT")
DEFAULT_RELATION_TYPES = (
    "PART_OF", "LOCATED_IN", "MEMBER_OF", "WORKS_FOR", "CREATED_BY", "FOUNDED_BY", "BORN_IN",
    "HAPPENED_IN", "CAUSES", "RELATED_TO",
)
MAX_TYPES = 64
_NAME = re.compile(r"^[A-Z][A-Z0-9_]{0,47}$")


def type_name(raw: str) -> str:
    """``"works for"`` -> ``"WORKS_FOR"``; ValueError when the result is not a safe identifier."""
    name = re.sub(r"[\s\-]+", "_", raw.strip()).upper()
    if not _NAME.match(name):
        raise ValueError(f"type {raw!r} must be a letter then letters, digits or '_' (at most 48)")
    return name


def _split(text: str) -> list[str]:
    return [part for part in text.split(",") if part.strip()]


def type_names(value: object) -> list[str]:
    """A de-duplicated list of type names from a list, a JSON list or a comma-separated string."""
    if isinstance(value, str):
        text = value.strip()
        items: object = json.loads(text) if text.startswith("[") else _split(text)
    else:
        items = value
    if not isinstance(items, list | tuple) or not all(isinstance(i, str) for i in items):
        raise ValueError("give a JSON list of names or comma-separated names")
    names = list(dict.fromkeys(type_name(i) for i in items))
    if not names:
        raise ValueError("at least one type is needed")
    if len(names) > MAX_TYPES:
        raise ValueError(f"at most {MAX_TYPES} types")
    return names
