"""Builds the served OpenAPI document: FastAPI's, plus the answers every route can give.

Per operation, from the route's declared access level and its body: 400 (Host), 401/403 (API keys, when
configured), 403 (cross-site, for state-changing routes), 413/422 (body checks, for methods with a body),
415 (declared bodies), 422 (parameters), 500 and 503; every 4xx/5xx without a schema of its own gets
the shared :class:`ErrorBody` (FastAPI's own 422 schema, which NeoRAG never answers, is replaced).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from fastapi.routing import APIRoute
from starlette.routing import BaseRoute

from app.api.openapi.responses import (
    DESCRIPTIONS,
    REF,
    ErrorBody,
    model_schema,
    registered_components,
    registered_parameters,
)
from app.api.security.access import PUBLIC, WRITE, Level, flat_routes, route_level
from app.api.security.keys import KeyRing
from app.api.security.middleware import STREAM_TOKEN_PARAM
from app.core.config import Settings

BODY_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
_REF = re.compile(r'"\$ref":\s*"#/components/schemas/([^"]+)"')
_ERROR_CONTENT = {"application/json": {"schema": {"$ref": REF + "ErrorBody"}}}
SECURITY_SCHEMES = {
    "ApiKeyHeader": {"type": "apiKey", "in": "header", "name": "X-API-Key",
                     "description": "A key from NEORAG_API_KEYS (read:KEY or write:KEY)."},
    "BearerKey": {"type": "http", "scheme": "bearer",
                  "description": "The same key as `Authorization: Bearer KEY`."},
    "StreamToken": {"type": "apiKey", "in": "query", "name": STREAM_TOKEN_PARAM,
                    "description": "A short-lived token from POST /auth/stream-token (GET streams only)."},
}


def install(app: FastAPI, settings: Settings) -> None:
    """Serve the finalized document at /openapi.json (built once, on first request)."""

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            doc = get_openapi(title=app.title, version=app.version, description=app.description,
                              routes=app.routes)
            app.openapi_schema = finalize(doc, app.routes, settings)
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]


def finalize(doc: dict[str, Any], routes: Sequence[BaseRoute], settings: Settings) -> dict[str, Any]:
    """Add the shared answers, security and components to ``doc`` (in place; returned)."""
    keys_on = KeyRing.parse(settings.api_keys).enabled  # as the guard reads them (",": no keys)
    for route in flat_routes(routes):
        if not isinstance(getattr(route, "original_route", route), APIRoute) or not route.include_in_schema:
            continue
        item = doc.get("paths", {}).get(route.path_format, {})
        for method in sorted(route.methods or ()):
            op = item.get(method.lower())
            if op is not None:
                _operation(op, method, route_level(route), keys_on, settings.public_read)
    _settings_parameters(doc, settings)
    schemas = doc.setdefault("components", {}).setdefault("schemas", {})
    for name in ("HTTPValidationError", "ValidationError"):
        schemas.pop(name, None)
    _add_model(schemas, ErrorBody)
    _add_registered(doc, schemas, settings)
    if keys_on:
        doc["components"]["securitySchemes"] = SECURITY_SCHEMES
    return doc


def _operation(op: dict[str, Any], method: str, level: Level, keys_on: bool, public_read: bool) -> None:
    op["x-neorag-access"] = level
    responses: dict[str, Any] = op.setdefault("responses", {})
    codes: list[int] = [400, 500, 503]
    if keys_on and level != PUBLIC:
        codes += [401, 403]
    if level == WRITE or method in BODY_METHODS:
        codes.append(403)
    if method in BODY_METHODS:
        codes += [413, 422]
    if "requestBody" in op:
        codes.append(415)
    if op.get("parameters"):
        codes.append(422)
    for number in codes:
        responses.setdefault(str(number), {"description": DESCRIPTIONS[number]})
    for code, answer in responses.items():
        if code[:1] in "45":
            content = answer.get("content") or {}
            schema = content.get("application/json", {}).get("schema", {})
            if not content or schema.get("$ref", "").endswith("/HTTPValidationError"):
                answer["content"] = dict(_ERROR_CONTENT)
        else:
            for media in (answer.get("content") or {}).values():
                schema = media.get("schema") or {}
                if "$ref" in schema and len(schema) > 1:  # a dict return type merged into a declared model
                    media["schema"] = {"$ref": schema["$ref"]}
    for media in ((op.get("requestBody") or {}).get("content") or {}).values():
        schema = media.get("schema") or {}
        if "$ref" in schema and len(schema) > 1:  # FastAPI's title beside the declared body
            media["schema"] = {"$ref": schema["$ref"]}
    if keys_on:
        if level == PUBLIC:
            op["security"] = []
        else:
            options: list[dict[str, list[str]]] = [{"ApiKeyHeader": []}, {"BearerKey": []}]
            if method == "GET":
                options.append({"StreamToken": []})
            if public_read and level != WRITE:
                options.append({})
            op["security"] = options


def _settings_parameters(doc: dict[str, Any], settings: Settings) -> None:
    """Merge the registered settings-driven keywords into their query parameters' schemas."""
    for (path, name), build in registered_parameters().items():
        for op in (doc.get("paths", {}).get(path) or {}).values():
            for param in op.get("parameters") or ():
                if param.get("name") == name and param.get("in") == "query":
                    schema = param.setdefault("schema", {})
                    target = next((s for s in schema.get("anyOf", ()) if s.get("type") == "integer"), schema)
                    target.update(build(settings))


def _add_model(schemas: dict[str, Any], model: Any) -> None:
    _add_schema(schemas, model.__name__, model_schema(model))


def _add_schema(schemas: dict[str, Any], name: str, schema: dict[str, Any]) -> None:
    schema = dict(schema)
    for sub_name, sub in (schema.pop("$defs", None) or {}).items():
        schemas.setdefault(sub_name, sub)
    schemas[name] = schema


def _add_registered(doc: dict[str, Any], schemas: dict[str, Any], settings: Settings) -> None:
    """Registered component schemas that the document references (and those they reference)."""
    import json

    builders = registered_components()
    while True:
        missing = {n for n in _REF.findall(json.dumps(doc)) if n not in schemas and n in builders}
        if not missing:
            return
        for name in sorted(missing):
            _add_schema(schemas, name, builders[name](settings))
