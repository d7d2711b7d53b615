"""Helpers shared by CLI commands."""

from __future__ import annotations

from pydantic import ValidationError

from app.core.config import Settings
from app.core.errors import ConfigError


def load_settings(**overrides: object) -> Settings:
    """Settings from env/.env with CLI overrides; a one-line error on bad values."""
    try:
        return Settings(**{k: v for k, v in overrides.items() if v is not None})  # type: ignore[arg-type]
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first.get("loc", ()))
        env = f"NEORAG_{field.upper()}" if field else "NEORAG_*"
        why = str(first.get("msg", "")).removeprefix("Value error, ")
        raise ConfigError(f"invalid setting {env}", why,
                          f"fix the {env} environment variable or .env entry") from None
