"""Which paths HTTP ingest may read: only under the configured ingest roots, symlinks resolved."""

from __future__ import annotations

from pathlib import Path

from app.core.errors import BadInput


def allowed_roots(roots: list[Path]) -> list[Path]:
    """The configured roots, resolved against the working directory."""
    return [Path(r).expanduser().resolve() for r in roots]


def check_allowed(path: str, roots: list[Path]) -> Path:
    """The resolved path when it lies under a root (403 otherwise) and exists (404 otherwise)."""
    if not path or not path.strip():
        raise BadInput("path: must not be empty", status=422, field="path")
    if "\x00" in path:
        raise BadInput("path: contains a NUL byte", status=422, field="path")
    resolved = Path(path.strip()).expanduser().resolve()
    bases = allowed_roots(roots)
    if not any(resolved == base or resolved.is_relative_to(base) for base in bases):
        shown = ", ".join(str(b) for b in bases) or "(none configured)"
        raise BadInput(f"path: {path} is outside the ingest roots ({shown}); "
                       "set NEORAG_INGEST_ROOTS to allow it", status=403, field="path")
    if not resolved.exists():
        raise BadInput(f"path: {path} does not exist", status=404, field="path")
    return resolved
