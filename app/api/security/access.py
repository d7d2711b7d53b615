"""Who may call a route: ``public``, ``read`` or ``write``, declared on the endpoint; undeclared = write.

Declare with the decorator on the endpoint function (or on a mounted ASGI app)::

    @router.get("/things")
    @access(READ)
    def things() -> ...: ...

Write-level routes also get the cross-site checks of state-changing requests, whatever their method
(``GET /ingest/stream`` starts an ingest), so a route that changes state must never be declared READ.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal, TypeVar

from starlette.routing import BaseRoute, Match
from starlette.types import Scope

try:  # FastAPI >= 0.16x keeps included routers nested; this flattens them (with their prefixes)
    from fastapi.routing import iter_route_contexts as _iter_route_contexts
except ImportError:  # pragma: no cover - older FastAPI copies routes into app.routes
    _iter_route_contexts = None  # type: ignore[assignment]

Level = Literal["public", "read", "write"]
PUBLIC: Level = "public"
READ: Level = "read"
WRITE: Level = "write"
_ATTR = "__neorag_access__"
_LEVELS = (PUBLIC, READ, WRITE)
T = TypeVar("T")


def access(level: Level) -> Callable[[T], T]:
    """Mark an endpoint function (or a mounted app) with the access level it needs."""
    if level not in _LEVELS:
        raise ValueError(f"access level must be one of {_LEVELS}, got {level!r}")

    def mark(target: T) -> T:
        setattr(target, _ATTR, level)
        return target

    return mark


def flat_routes(routes: Sequence[BaseRoute]) -> list[Any]:
    """Every route the app serves, included routers flattened (objects with matches/endpoint/path)."""
    if _iter_route_contexts is None:
        return list(routes)
    return list(_iter_route_contexts(routes))


def declared_level(route: Any) -> Level | None:
    """The level declared on the route's endpoint (or mounted app), or None."""
    target = getattr(route, "endpoint", None) or getattr(route, "app", None)
    level = getattr(target, _ATTR, None)
    return level if level in _LEVELS else None


def route_level(route: Any) -> Level:
    """The level a request to ``route`` needs: as declared, WRITE when undeclared, READ for no route."""
    if route is None:
        return READ  # unknown path: a key is still needed to learn that it does not exist
    return declared_level(route) or WRITE


class RouteTable:
    """Finds the route a request will reach (before routing), with a bounded cache per (method, path)."""

    def __init__(self, routes: Callable[[], Sequence[BaseRoute]], cache_size: int = 4096) -> None:
        self._routes = routes
        self._cache: dict[tuple[str, str], tuple[Any, Level]] = {}
        self._cache_size = cache_size
        self._flat: list[Any] = []
        self._seen: tuple[int, int] = (-1, -1)

    def lookup(self, scope: Scope) -> tuple[Any, Level]:
        """(route or None, level needed) for this HTTP request scope."""
        routes = self._routes()
        version = (id(routes), len(routes))
        if version != self._seen:  # routes added after start (tests, mounts): forget old answers
            self._flat = flat_routes(routes)
            self._cache.clear()
            self._seen = version
        key = (scope["method"], scope["path"])
        hit = self._cache.get(key)
        if hit is not None:
            return hit
        found = self._match(self._flat, scope)
        if len(self._cache) >= self._cache_size:
            self._cache.clear()
        self._cache[key] = found
        return found

    @staticmethod
    def _match(routes: Sequence[Any], scope: Scope) -> tuple[Any, Level]:
        partial: Any = None
        probe: dict[str, Any] = {"type": "http", "path": scope["path"], "method": scope["method"],
                                 "root_path": scope.get("root_path", "")}
        for route in routes:
            match, _ = route.matches(probe)
            if match is Match.FULL:
                return route, route_level(route)
            if match is Match.PARTIAL and partial is None:
                partial = route
        return partial, route_level(partial)
