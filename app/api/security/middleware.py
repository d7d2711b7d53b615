"""Two pure-ASGI middlewares around the app (CORS sits between them):

* :class:`EdgeGuard` (outermost): Host allow-list, cross-site refusal of state-changing requests and of
  foreign CORS preflights, and a JSON 500 for any unhandled error (so the connection stays usable).
* :class:`AccessGuard` (inside CORS, so refusals carry CORS headers): API keys by the route's declared
  level, then the body checks (413 size, 415 media type, 422 UTF-8 / depth / lone surrogate) before
  any route parses the body.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from typing import Any

from starlette.routing import BaseRoute
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.api.security import limits
from app.api.security.access import PUBLIC, READ, WRITE, Level, RouteTable
from app.api.security.keys import satisfies
from app.api.security.media import accepts, declared_media_types
from app.api.security.origins import SAFE_METHODS
from app.api.security.policy import Policy

log = logging.getLogger("neorag.security")
_CODES = {400: "bad_request", 415: "unsupported_media_type", 422: "invalid_request"}
ROUTE_KEY = "neorag.route"
CREDENTIAL_KEY = "neorag_credential"  # in scope["state"]: the level the request's key or token granted
STREAM_TOKEN_PARAM = "sse_token"
_AUTH_HINT = "send 'Authorization: Bearer <key>' or 'X-API-Key: <key>' (NEORAG_API_KEYS)"


HEADERS_KEY = "neorag.headers"


def _headers(scope: Scope) -> dict[bytes, bytes]:
    """The request headers as a dict (built once per request; last value wins; names lower-case in ASGI)."""
    found: dict[bytes, bytes] | None = scope.get(HEADERS_KEY)
    if found is None:
        found = scope[HEADERS_KEY] = dict(scope["headers"])
    return found


async def send_json(send: Send, status: int, body: dict[str, Any],
                    headers: Sequence[tuple[bytes, bytes]] = ()) -> None:
    """A complete JSON response on a raw ASGI ``send``."""
    payload = json.dumps(body, ensure_ascii=False).encode("utf-8")
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-length", str(len(payload)).encode()), *headers]})
    await send({"type": "http.response.body", "body": payload})


def _text(value: bytes | None) -> str | None:
    return None if value is None else value.decode("latin-1")


class EdgeGuard:
    """Host check, cross-site refusal, and JSON 500s; finds the route's access level once per request."""

    def __init__(self, app: ASGIApp, policy: Policy, routes: Callable[[], Sequence[BaseRoute]]) -> None:
        self.app, self.policy, self.table = app, policy, RouteTable(routes)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = _headers(scope)
        policy = self.policy
        host = _text(headers.get(b"host"))
        if not policy.hosts.allows(host):
            policy.refusals.add("host")
            await send_json(send, 400, {
                "error": "host_not_allowed",
                "message": f"Host {host!r} is not served here (DNS-rebinding protection); a name of this "
                           "server must be listed in NEORAG_ALLOWED_HOSTS"})
            return
        route, level = self.table.lookup(scope)
        scope[ROUTE_KEY] = (route, level)
        method = scope["method"]
        origin = _text(headers.get(b"origin"))
        if method == "OPTIONS" and origin is not None and b"access-control-request-method" in headers:
            if not policy.origins.trusts(origin, host):  # a foreign preflight: never let CORS say yes
                policy.refusals.add("cross_site")
                message = f"origin {origin[:200]!r} is not in NEORAG_CORS_ORIGINS"
                await send_json(send, 403, {"error": "cross_site_request", "message": message})
                return
        elif method not in SAFE_METHODS or level == WRITE:
            why = policy.origins.refuses(origin, _text(headers.get(b"sec-fetch-site")), host)
            if why is not None:
                policy.refusals.add("cross_site")
                await send_json(send, 403, {"error": "cross_site_request", "message": why + (
                    "; list trusted browser origins in NEORAG_CORS_ORIGINS")})
                return
        await self._call_guarded(scope, receive, send)

    async def _call_guarded(self, scope: Scope, receive: Receive, send: Send) -> None:
        started = False

        async def tracking_send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, receive, tracking_send)
        except Exception as exc:  # noqa: BLE001 - one JSON line, and the keep-alive connection survives
            if started:
                raise
            log.exception("unhandled error on %s %s", scope["method"], scope["path"])
            await send_json(send, 500, {"error": "internal_error",
                                        "message": f"{type(exc).__name__}: {str(exc)[:500]}"})


class AccessGuard:
    """API keys by route level, then body size / media type / JSON sanity, before any parsing."""

    def __init__(self, app: ASGIApp, policy: Policy) -> None:
        self.app, self.policy = app, policy

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = _headers(scope)
        route, level = scope.get(ROUTE_KEY, (None, READ))
        if self.policy.keys.enabled and level != PUBLIC:
            if not await self._authorized(scope, headers, level, send):
                return
        if scope["method"] in ("GET", "HEAD", "OPTIONS") and b"content-length" not in headers \
                and b"transfer-encoding" not in headers:
            await self.app(scope, receive, send)
            return
        await self._checked_body(scope, receive, send, headers, route)

    async def _authorized(self, scope: Scope, headers: dict[bytes, bytes], level: Level, send: Send) -> bool:
        policy = self.policy
        key = _presented_key(headers)
        granted: Level | None
        if key is not None:
            granted = policy.keys.level_of(key)
        else:
            token = _stream_token(scope)
            granted = None if token is None else policy.keys.verify(token, scope["path"])
            if token is None and level == READ and policy.public_read:
                return True
            if token is None:
                policy.refusals.add("unauthorized")
                await send_json(send, 401, {"error": "unauthorized",
                                            "message": f"this endpoint needs an API key: {_AUTH_HINT}"},
                                [(b"www-authenticate", b'Bearer realm="neorag"')])
                return False
        if granted is None:
            policy.refusals.add("unauthorized")
            await send_json(send, 401, {"error": "invalid_api_key",
                                        "message": f"the API key or stream token is not valid: {_AUTH_HINT}"},
                            [(b"www-authenticate", b'Bearer realm="neorag", error="invalid_token"')])
            return False
        if not satisfies(granted, level):
            policy.refusals.add("insufficient_scope")
            await send_json(send, 403, {"error": "insufficient_scope",
                                        "message": f"this endpoint needs a {level} key; the key sent is a "
                                                   f"{granted} key"})
            return False
        scope.setdefault("state", {})[CREDENTIAL_KEY] = granted
        return True

    async def _checked_body(self, scope: Scope, receive: Receive, send: Send, headers: dict[bytes, bytes],
                            route: Any) -> None:
        policy = self.policy
        content_type = _text(headers.get(b"content-type"))
        multipart = content_type is not None and content_type.lower().startswith("multipart/")
        limit = policy.max_upload_bytes if multipart else policy.max_body_bytes
        declared = headers.get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            await self._too_large(send, int(declared), limit, multipart)
            return
        if declared is not None and declared == b"0":
            await self.app(scope, receive, send)
            return
        if content_type is not None and route is not None and not accepts(route, content_type):
            policy.refusals.add("media_type")
            wanted = " or ".join(sorted(declared_media_types(route) or {"application/json"}))
            message = f"body: Content-Type {content_type[:100]!r} is not accepted here; send {wanted}"
            await send_json(send, 415, {"error": "unsupported_media_type", "field": "Content-Type",
                                        "message": message})
            return
        if multipart:
            await self.app(scope, _counting(receive, limit), send)
            return
        charset = limits.foreign_charset(content_type) if limits.is_json_type(content_type) else None
        if charset is not None:
            policy.refusals.add("media_type")
            await send_json(send, 415, {"error": "unsupported_media_type", "field": "Content-Type",
                                        "message": f"body: charset {charset!r} is not accepted: JSON must be "
                                                   "UTF-8 (RFC 8259 section 8.1)"})
            return
        body = await _read_body(receive, limit)
        if body is None:
            await self._too_large(send, None, limit, multipart)
            return
        if limits.is_json_type(content_type):
            problem = self._json_problem(body)
            if problem is not None:
                policy.refusals.add("bad_json")
                status, message = problem
                await send_json(send, status, {"error": _CODES[status], "field": "body",
                                               "message": f"body: {message}"})
                return
        await self.app(scope, _replay(body, receive), send)

    def _json_problem(self, body: bytes) -> tuple[int, str] | None:
        """(status, message) of the first thing wrong with a JSON body, or None: the encoding first (JSON
        is UTF-8, so nothing after this check ever decodes UTF-16 / UTF-32), then what a parser trips on."""
        where = limits.utf8_error(body)
        if where is not None:
            return 422, f"not valid UTF-8 (at {where}); JSON must be UTF-8 (RFC 8259 section 8.1)"
        control = limits.control_byte(body)
        if control is not None:
            return 422, control
        if limits.json_depth_over(body, self.policy.max_json_depth):
            return 422, (f"JSON nested deeper than {self.policy.max_json_depth} levels "
                         "(NEORAG_MAX_JSON_DEPTH)")
        lone = limits.lone_surrogate(body)
        if lone is not None:
            return 422, (f"the escape {lone} is a lone UTF-16 surrogate, not a character: "
                         "send valid Unicode text")
        number = limits.non_json_number(body)
        if number is not None:
            return 422, f"{number} is not a JSON number"
        digits = limits.long_number(body)
        if digits is not None:
            return 400, (f"a number of {digits} digits exceeds the limit of {limits.max_digits()} digits "
                         "(larger integers cannot be converted)")
        return None

    async def _too_large(self, send: Send, size: int | None, limit: int, multipart: bool) -> None:
        self.policy.refusals.add("too_large")
        setting = "NEORAG_UPLOAD_MAX_FILES x NEORAG_UPLOAD_MAX_BYTES" if multipart else \
            "NEORAG_MAX_BODY_BYTES"
        what = f"{size} bytes exceed" if size is not None else "more bytes than"
        await send_json(send, 413, {"error": "body_too_large", "field": "body",
                                    "message": f"body: {what} the limit of {limit} bytes ({setting})"})


def writer(request: Any) -> bool:
    """Whether a request may see what only a write key may: keys are off, or it carried a write key."""
    policy: Policy | None = getattr(request.app.state, "policy", None)
    if policy is None or not policy.keys.enabled:
        return True
    return bool(request.scope.get("state", {}).get(CREDENTIAL_KEY) == WRITE)


def _presented_key(headers: dict[bytes, bytes]) -> bytes | None:
    auth = headers.get(b"authorization")
    if auth is not None:
        scheme, _, value = auth.partition(b" ")
        if scheme.lower() == b"bearer" and value.strip():
            return value.strip()
    api_key = headers.get(b"x-api-key")
    if api_key is not None and api_key.strip():
        return api_key.strip()
    return None


def _stream_token(scope: Scope) -> str | None:
    if scope["method"] != "GET":
        return None
    query = scope.get("query_string", b"")
    marker = STREAM_TOKEN_PARAM.encode() + b"="
    if marker not in query:
        return None
    from urllib.parse import parse_qs

    values = parse_qs(query.decode("latin-1")).get(STREAM_TOKEN_PARAM)
    return values[-1] if values else None


async def _read_body(receive: Receive, limit: int) -> bytes | None:
    """The whole request body, or None as soon as it exceeds ``limit`` bytes."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            break
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


def _replay(body: bytes, receive: Receive) -> Receive:
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


def _counting(receive: Receive, limit: int) -> Receive:
    from app.api.security.media import BodyTooLarge

    seen = 0

    async def counted() -> Message:
        nonlocal seen
        message = await receive()
        seen += len(message.get("body", b""))
        if seen > limit:
            raise BodyTooLarge(limit)
        return message

    return counted
