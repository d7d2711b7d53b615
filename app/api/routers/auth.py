"""POST /auth/stream-token: a short-lived token for EventSource streams (which cannot send headers)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from pydantic import BaseModel, Field

from app.api.openapi import errors, ok
from app.api.openapi.strict import StrictBody
from app.api.security import READ, access
from app.api.security.access import flat_routes
from app.api.security.middleware import CREDENTIAL_KEY, STREAM_TOKEN_PARAM
from app.api.security.policy import Policy
from app.core.errors import BadInput

router = APIRouter(tags=["auth"])


class StreamTokenRequest(StrictBody):
    """Which GET stream the token is for."""

    path: str = Field("/ingest/stream", pattern=r"^/[^\x00-\x1f\x7f-\x9f?#]{0,200}$",
                      description="The GET endpoint the token opens (no query string).")


class StreamToken(BaseModel):
    """A token for one path, or null when API keys are off (no token needed)."""

    token: str | None = Field(description="Send as ?sse_token=... on that GET request only.")
    param: str = Field(STREAM_TOKEN_PARAM, description="The query parameter name.")
    path: str
    expires_in: float = Field(description="Seconds the token stays valid.")
    level: str | None = Field(description="What it grants: read or write (null when keys are off).")


@router.post("/auth/stream-token", response_model=None, responses={**ok(StreamToken), **errors(404)})
@access(READ)
def stream_token(body: StreamTokenRequest, request: Request) -> dict[str, Any]:
    """Mint a token that opens ``GET path`` for ``NEORAG_SSE_TOKEN_TTL_S`` seconds with the caller's level.

    The page uses it for ``EventSource`` (no custom headers there); the long-lived key never enters a URL.
    """
    policy: Policy = request.app.state.policy
    _get_route(request, body.path)
    if not policy.keys.enabled:
        return {"token": None, "param": STREAM_TOKEN_PARAM, "path": body.path, "expires_in": 0, "level": None}
    granted = request.scope.get("state", {}).get(CREDENTIAL_KEY)
    if granted is None:  # public read without a key: nothing to grant beyond what is open anyway
        raise BadInput("a stream token needs an API key: send it as 'Authorization: Bearer <key>'",
                       status=401, field="Authorization")
    token = policy.keys.mint(granted, body.path, policy.token_ttl_s)
    return {"token": token, "param": STREAM_TOKEN_PARAM, "path": body.path,
            "expires_in": policy.token_ttl_s, "level": granted}


def _get_route(request: Request, path: str) -> Any:
    for route in flat_routes(request.app.router.routes):
        if getattr(route, "path", None) == path and "GET" in (getattr(route, "methods", None) or ()):
            return route
    raise BadInput(f"path: no GET endpoint {path!r} to open", status=404, field="path")
