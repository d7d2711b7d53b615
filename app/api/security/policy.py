"""The request policy of one app, built once from the settings, and its refusal counters."""

from __future__ import annotations

import threading
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from app.api.security.keys import KeyRing
from app.api.security.origins import HostPolicy, OriginPolicy
from app.core.config import Settings


@dataclass
class Refusals:
    """How many requests the guard refused, by reason (shown under ``security`` in /diagnostics)."""

    counts: Counter[str] = field(default_factory=Counter)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, reason: str) -> None:
        with self.lock:
            self.counts[reason] += 1

    def snapshot(self) -> dict[str, int]:
        with self.lock:
            return dict(self.counts)


MULTIPART_SLACK = 1 << 20  # part headers and boundaries beside the files themselves


def upload_body_limit(settings: Settings) -> int:
    """Largest multipart body: NEORAG_UPLOAD_MAX_FILES files of NEORAG_UPLOAD_MAX_BYTES, plus framing."""
    return settings.upload_max_bytes * settings.upload_max_files + MULTIPART_SLACK


@dataclass(frozen=True)
class Policy:
    """Everything the guard middlewares decide with."""

    hosts: HostPolicy
    origins: OriginPolicy
    keys: KeyRing
    public_read: bool
    max_body_bytes: int
    max_upload_bytes: int
    max_json_depth: int
    token_ttl_s: float
    refusals: Refusals

    @classmethod
    def from_settings(cls, settings: Settings) -> Policy:
        """Build from the settings (ConfigError on malformed API keys)."""
        return cls(hosts=HostPolicy.build(settings.allowed_hosts),
                   origins=OriginPolicy.build(settings.cors_origins),
                   keys=KeyRing.parse(settings.api_keys), public_read=settings.public_read,
                   max_body_bytes=settings.max_body_bytes, max_upload_bytes=upload_body_limit(settings),
                   max_json_depth=settings.max_json_depth, token_ttl_s=settings.sse_token_ttl_s,
                   refusals=Refusals())

    def report(self) -> dict[str, Any]:
        """The ``security`` section of /diagnostics (no key material)."""
        return {"api_keys": self.keys.enabled, "keys_configured": len(self.keys.entries),
                "public_read": self.public_read, "cors_origins": sorted(self.origins.trusted)
                + (["*"] if self.origins.any_origin else []),
                "max_body_bytes": self.max_body_bytes, "max_json_depth": self.max_json_depth,
                "refused": self.refusals.snapshot()}
