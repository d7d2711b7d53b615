"""OpenAPI that tells the truth: one error model, shared error responses, declared bodies and models."""

from app.api.openapi.responses import ErrorBody, component, errors, json_body, model_ref, ok

__all__ = ["ErrorBody", "component", "errors", "json_body", "model_ref", "ok"]
