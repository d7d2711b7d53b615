"""API keys (``NEORAG_API_KEYS``): parsing, constant-time checks, and short-lived stream tokens.

Keys are held only as SHA-256 digests and compared with :func:`hmac.compare_digest` against every
configured key (the time taken does not depend on which key, or how much of one, matched). Stream
tokens let the page open an ``EventSource`` (which cannot send headers): an HMAC over (expiry, level,
nonce, path) keyed by the configured keys, so every worker with the same settings accepts it, and it
stops working after ``sse_token_ttl_s`` seconds, or at once when the keys change.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import time
from dataclasses import dataclass

from app.api.security.access import READ, WRITE, Level
from app.core.errors import ConfigError

MIN_KEY_CHARS = 16
_GENERATE = 'generate one with `python -c "import secrets; print(secrets.token_urlsafe(32))"`'
_RANK = {READ: 1, WRITE: 2}


def _digest(key: bytes) -> bytes:
    return hashlib.sha256(key).digest()


@dataclass(frozen=True)
class KeyRing:
    """The configured keys as (digest, level) pairs; empty = authentication off."""

    entries: tuple[tuple[bytes, Level], ...]
    secret: bytes

    @classmethod
    def parse(cls, raw: str) -> KeyRing:
        """Parse ``read:KEY,write:KEY``; ConfigError (one line) on a malformed entry."""
        entries: list[tuple[bytes, Level]] = []
        keys: list[bytes] = []
        for number, part in enumerate((p.strip() for p in raw.split(",")), start=1):
            if not part:
                continue
            scope, sep, key = part.partition(":")
            scope = scope.strip().lower()
            key = key.strip()
            if not sep or scope not in _RANK:
                raise ConfigError(f"NEORAG_API_KEYS entry {number} is not 'read:KEY' or 'write:KEY'",
                                  fix="write e.g. NEORAG_API_KEYS=read:<random>,write:<random>")
            if len(key) < MIN_KEY_CHARS or not key.isprintable() or not key.isascii() or " " in key:
                raise ConfigError(f"NEORAG_API_KEYS entry {number}: the key must be {MIN_KEY_CHARS}+ "
                                  "printable ASCII characters without spaces", fix=_GENERATE)
            level: Level = READ if scope == READ else WRITE
            entries.append((_digest(key.encode("ascii")), level))
            keys.append(key.encode("ascii"))
        secret = _digest(b"neorag-stream-token\0" + b"\0".join(sorted(keys))) if keys else b""
        return cls(tuple(entries), secret)

    @property
    def enabled(self) -> bool:
        """True when at least one key is configured."""
        return bool(self.entries)

    def level_of(self, key: bytes) -> Level | None:
        """The strongest level granted by ``key`` (checked against every entry), or None."""
        digest = _digest(key)
        best: Level | None = None
        for stored, level in self.entries:
            if hmac.compare_digest(digest, stored) and (best is None or _RANK[level] > _RANK[best]):
                best = level
        return best

    def mint(self, level: Level, path: str, ttl_s: float, now: float | None = None) -> str:
        """A token granting ``level`` on GET ``path`` for ``ttl_s`` seconds."""
        expiry = int((time.time() if now is None else now) + ttl_s)
        nonce = secrets.token_urlsafe(9)
        body = f"{expiry}.{level}.{nonce}"
        return f"{body}.{self._sign(body, path)}"

    def verify(self, token: str, path: str, now: float | None = None) -> Level | None:
        """The level a stream token grants on ``path`` now, or None (bad, expired or another path)."""
        if not self.enabled:
            return None
        parts = token.split(".")
        if len(parts) != 4 or parts[1] not in _RANK:
            return None
        body, signature = ".".join(parts[:3]), parts[3]
        if not hmac.compare_digest(signature.encode(), self._sign(body, path).encode()):
            return None
        try:
            expiry = int(parts[0])
        except ValueError:
            return None
        if expiry < (time.time() if now is None else now):
            return None
        return READ if parts[1] == READ else WRITE

    def _sign(self, body: str, path: str) -> str:
        mac = hmac.new(self.secret, f"{body}\0{path}".encode(), hashlib.sha256).digest()
        return base64.urlsafe_b64encode(mac[:24]).decode().rstrip("=")


def satisfies(granted: Level, needed: Level) -> bool:
    """Whether a credential of level ``granted`` may call a route needing ``needed`` (read or write)."""
    return _RANK.get(granted, 0) >= _RANK.get(needed, 0)
