"""Errors with a one-line, actionable message: what happened, why, what to do."""

from __future__ import annotations


class NeoRAGError(Exception):
    """Base error. ``str(err)`` is a single actionable line."""

    def __init__(self, what: str, why: str = "", fix: str = "") -> None:
        self.what, self.why, self.fix = what, why, fix
        parts = [what]
        if why:
            parts.append(f"because {why}")
        if fix:
            parts.append(f"-> {fix}")
        super().__init__(" ".join("; ".join(parts).split()))  # driver messages may span lines


class ConfigError(NeoRAGError):
    """A setting is wrong or a required package is missing."""


class StoreUnavailable(NeoRAGError):
    """The graph store cannot be reached."""


class StatementError(NeoRAGError):
    """A named Cypher statement is missing or failed."""


class LLMUnavailable(NeoRAGError):
    """No LLM endpoint is configured, or it failed."""


class LLMRejected(LLMUnavailable):
    """The LLM endpoint refused the request itself (HTTP 400/404/422), e.g. an unsupported option."""


class BadInput(NeoRAGError):
    """A request value is invalid (mapped to HTTP 4xx by the routers)."""

    def __init__(self, message: str, status: int = 422, field: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.field = field
