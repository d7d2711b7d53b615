"""The shared error model and the helpers routes declare their responses and bodies with.

A route declares what only it can answer; :func:`app.api.openapi.document.finalize` adds the answers
every route can give (400 Host, 401/403 keys, 403 cross-site, 413/415/422 body checks, 500, 503)::

    @router.get("/things/{id}", response_model=None, responses={**ok(Thing), **errors(404)})
    @router.post("/raw", openapi_extra=json_body(RawBody))   # body parsed by hand, schema declared
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from app.core.config import Settings

REF = "#/components/schemas/"

DESCRIPTIONS = {
    400: "Bad request: a Host header this server does not answer to, or a body that cannot be parsed",
    401: "No API key, or not a valid one (only when NEORAG_API_KEYS is set)",
    403: "The key lacks the scope, or a state-changing request came from another site",
    404: "Not found",
    405: "Method not allowed",
    409: "Conflict with work in progress",
    413: "Request body (or batch) too large",
    415: "Unsupported Content-Type",
    422: "Invalid request: the message names the field",
    500: "Internal error (a bug: please report it)",
    503: "The graph store or the LLM is unavailable; the body says what to do",
}


class ErrorDetail(BaseModel):
    """One validation problem."""

    field: str = Field(description="Where: a body field (`context[2].text`), a parameter, or `body`.")
    message: str


class ErrorBody(BaseModel):
    """Every 4xx/5xx JSON answer (a few add fields of their own)."""

    model_config = ConfigDict(extra="allow")
    error: str = Field(description="Machine-readable code, e.g. invalid_request, not_found, unauthorized, "
                                   "store_unavailable.")
    message: str = Field(description="One line for people: what is wrong and what to do.")
    field: str | None = Field(None, description="The request field at fault, when one is.")
    reason: str | None = Field(None, description="Why (503 answers).")
    hint: str | None = Field(None, description="What to do (503 answers).")
    detail: list[ErrorDetail] | None = Field(None, description="Every problem found (422 validation).")


def errors(*codes: int) -> dict[int | str, dict[str, Any]]:
    """``responses=`` entries for route-specific error codes, all with the shared :class:`ErrorBody`."""
    return {code: {"model": ErrorBody, "description": DESCRIPTIONS.get(code, "Error")} for code in codes}


def ok(model: Any, description: str = "Success", status: int = 200,
       media_types: tuple[str, ...] = ()) -> dict[int | str, dict[str, Any]]:
    """``responses=`` entry documenting the success body (docs only: nothing is filtered or re-validated).

    Use with ``response_model=None``. ``media_types`` adds other content types (e.g. ``text/plain``)
    whose body is a string.
    """
    entry: dict[str, Any] = {"model": model, "description": description}
    if media_types:
        entry["content"] = {m: {"schema": {"type": "string"}} for m in media_types}
    return {status: entry}


SchemaBuilder = Callable[[Settings], dict[str, Any]]
_COMPONENTS: dict[str, SchemaBuilder] = {}


def component(name: str, build: SchemaBuilder) -> dict[str, str]:
    """Register a component schema built from the settings (limits, max lengths); returns its ``$ref``."""
    _COMPONENTS[name] = build
    return {"$ref": REF + name}


def model_ref(model: type[BaseModel]) -> dict[str, str]:
    """Register a pydantic model as a component schema; returns its ``$ref``."""
    return component(model.__name__, lambda _settings: model_schema(model))


def model_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The model's JSON schema with nested models as component references (in ``$defs``)."""
    return model.model_json_schema(ref_template=REF + "{model}", mode="validation")


_PARAMETERS: dict[tuple[str, str], SchemaBuilder] = {}


def parameter_schema(path: str, name: str, build: SchemaBuilder) -> None:
    """Register settings-driven schema keywords (e.g. a maximum) merged into the query parameter ``name``
    of every operation at ``path``, so the document states the limit the server applies."""
    _PARAMETERS[(path, name)] = build


def registered_parameters() -> dict[tuple[str, str], SchemaBuilder]:
    """Every parameter schema registered by :func:`parameter_schema`."""
    return dict(_PARAMETERS)


def registered_components() -> dict[str, SchemaBuilder]:
    """Every component registered by :func:`component` / :func:`model_ref`."""
    return dict(_COMPONENTS)


def json_body(schema: dict[str, Any], required: bool = True, description: str = "") -> dict[str, Any]:
    """``openapi_extra=`` declaring a JSON request body that a route parses itself.

    ``schema`` may use ``$ref``s from :func:`component` / :func:`model_ref`. The 415 check reads the
    declared media type, so a body of another type is refused before the route runs.
    """
    body: dict[str, Any] = {"required": required, "content": {"application/json": {"schema": schema}}}
    if description:
        body["description"] = description
    return {"requestBody": body}
