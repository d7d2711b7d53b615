"""Request models whose JSON Schema is the truth: strict JSON types, and integers as JSON Schema counts them.

Pydantic's lax mode takes ``false`` or ``"3"`` for an int and ``"yes"`` for a bool, which their schemas
forbid; its strict mode refuses ``3.0``, which JSON Schema counts as an integer. ``StrictBody`` accepts
exactly what the generated schema says: strict types, with integral floats turned into ints first.
"""

from __future__ import annotations

import types
from functools import cache
from typing import Any, Union, get_args, get_origin

from pydantic import BaseModel, ConfigDict, model_validator


def _is_int(annotation: Any) -> bool:
    if annotation is int:
        return True
    if get_origin(annotation) in (Union, types.UnionType):
        return any(_is_int(a) for a in get_args(annotation))
    return False


class StrictBody(BaseModel):
    """Base of JSON request bodies: no type coercion beyond what JSON Schema itself allows."""

    model_config = ConfigDict(strict=True)

    @model_validator(mode="before")
    @classmethod
    def _integral_floats(cls, data: Any) -> Any:
        """``3.0`` -> ``3`` for int fields (JSON Schema's integer); bools and strings stay refused."""
        if not isinstance(data, dict):
            return data
        fixed = {name: int(data[name]) for name in _int_fields(cls)
                 if isinstance(data.get(name), float) and data[name].is_integer()}
        return {**data, **fixed} if fixed else data


@cache
def _int_fields(model: type[BaseModel]) -> tuple[str, ...]:
    return tuple(name for name, field in model.model_fields.items() if _is_int(field.annotation))
