"""Host allow-list (against DNS rebinding) and cross-site checks of state-changing requests.

A browser tricked by DNS rebinding sends the attacker's host name in ``Host``; only loopback names and
the configured ones are served. A state-changing request from a page of another origin carries that
``Origin`` (or, without one, ``Sec-Fetch-Site: cross-site`` / ``same-site``): it is refused unless the
origin is NeoRAG's own or listed in ``NEORAG_CORS_ORIGINS``. Clients that are not browsers send
neither header and pass.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
_FOREIGN_SITES = frozenset({"cross-site", "same-site"})  # same-site: another port of 127.0.0.1, too


def host_name(host_header: str) -> str:
    """The name of a Host header value: port, IPv6 brackets and a trailing dot removed, lower-cased."""
    host = host_header.strip().lower()
    if host.startswith("["):
        end = host.find("]")
        host = host[1:end] if end > 0 else host
    elif host.count(":") == 1:
        host = host.split(":", 1)[0]
    return host.rstrip(".")


@dataclass(frozen=True)
class HostPolicy:
    """Which Host header names are served."""

    exact: frozenset[str]
    suffixes: tuple[str, ...]
    any_host: bool

    @classmethod
    def build(cls, extra: Iterable[str]) -> HostPolicy:
        """Loopback names plus ``extra`` (exact names, ``*.suffix`` or ``*``)."""
        names = [host_name(h) for h in extra if h.strip()]
        return cls(exact=frozenset(LOOPBACK_HOSTS) | {n for n in names if not n.startswith("*")},
                   suffixes=tuple(n[1:] for n in names if n.startswith("*.")),
                   any_host="*" in names)

    def allows(self, host_header: str | None) -> bool:
        """True for an accepted Host (or none: HTTP/1.0 clients, never a browser)."""
        if host_header is None or self.any_host:
            return True
        name = host_name(host_header)
        return name in self.exact or any(name.endswith(s) for s in self.suffixes)


def origin_netloc(origin: str) -> str | None:
    """``host:port`` of an Origin header value (None for ``null`` or garbage)."""
    try:
        parts = urlsplit(origin.strip())
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return None
    return parts.netloc.lower()


def _default_port_off(netloc: str) -> str:
    """``localhost:80`` -> ``localhost`` (and :443): an Origin leaves the default port out."""
    for port in (":80", ":443"):
        if netloc.endswith(port):
            return netloc[: -len(port)]
    return netloc


@dataclass(frozen=True)
class OriginPolicy:
    """Origins trusted with state-changing requests: NeoRAG's own plus ``NEORAG_CORS_ORIGINS``."""

    trusted: frozenset[str]
    any_origin: bool

    @classmethod
    def build(cls, cors_origins: Iterable[str]) -> OriginPolicy:
        origins = [o.strip().rstrip("/").lower() for o in cors_origins if o.strip()]
        return cls(trusted=frozenset(o for o in origins if o != "*"), any_origin="*" in origins)

    def trusts(self, origin: str, host_header: str | None) -> bool:
        """Whether ``origin`` is this server's own (same host:port as Host) or a configured one."""
        value = origin.strip().rstrip("/").lower()
        if self.any_origin or value in self.trusted:
            return True
        netloc = origin_netloc(value)
        if netloc is None or host_header is None:
            return False
        return _default_port_off(netloc) == _default_port_off(host_header.strip().lower())

    def refuses(self, origin: str | None, fetch_site: str | None, host_header: str | None) -> str | None:
        """Why a state-changing request is refused as cross-site, or None when it may proceed."""
        if origin is not None:
            if self.trusts(origin, host_header):
                return None
            return f"requests from origin {origin.strip()[:200]!r} may not change state on this server"
        if fetch_site is not None and fetch_site.strip().lower() in _FOREIGN_SITES:
            return f"a {fetch_site.strip().lower()} request may not change state on this server"
        return None
