"""Which paths HTTP ingest may read: only under the configured ingest roots, symlinks resolved.

Checked twice: the path asked for (:func:`check_allowed`, 403/404 before any work), and every file the
walk finds, resolved again just before it is read (:func:`outside_roots`): a symlinked file inside a
root that points outside it is refused, never loaded, so never stored or served.
"""

from __future__ import annotations

from pathlib import Path

from app.core.errors import BadInput
from app.core.text import text_problem
from ingest.options import IngestOptions


def allowed_roots(roots: list[Path]) -> list[Path]:
    """The configured roots, resolved against the working directory."""
    return [Path(r).expanduser().resolve() for r in roots]


def _inside(resolved: Path, bases: list[Path]) -> bool:
    return any(resolved == base or resolved.is_relative_to(base) for base in bases)


def check_allowed(path: str, roots: list[Path]) -> Path:
    """The resolved path when it lies under a root (403 otherwise) and exists (404 otherwise)."""
    if not path or not path.strip():
        raise BadInput("path: must not be empty", status=422, field="path")
    problem = text_problem(path)
    if problem:
        raise BadInput(f"path: {problem}", status=422, field="path")
    asked = Path(path.strip())
    try:
        asked = asked.expanduser()
    except RuntimeError:  # "~nosuchuser/...": no such home, so taken literally (and then outside the roots)
        pass
    resolved = asked.resolve()
    bases = allowed_roots(roots)
    inside = _inside(resolved, bases)
    try:
        exists = inside and resolved.exists()
    except OSError:  # a name too long, a symlink loop: nothing there that could be read
        exists = False
    if not inside:
        shown = ", ".join(str(b) for b in bases) or "(none configured)"
        raise BadInput(f"path: {path[:300]} is outside the ingest roots ({shown}); "
                       "set NEORAG_INGEST_ROOTS to allow it", status=403, field="path")
    if not exists:
        raise BadInput(f"path: {path[:300]} does not exist", status=404, field="path")
    return resolved


def checked_target(path: str, roots: list[Path], options: IngestOptions) -> Path:
    """Both checks for one request: the path asked for now (:func:`check_allowed`), and ``options`` set so
    that every file the walk finds is checked again against the same roots."""
    target = check_allowed(path, roots)
    options.allowed_roots = list(roots)
    return target


def outside_roots(file: Path, roots: list[Path] | None) -> str | None:
    """Why ``file`` may not be read (it resolves outside every root), or None; no roots = no limit (CLI)."""
    if roots is None:
        return None
    try:
        resolved = file.resolve(strict=True)
    except (OSError, RuntimeError) as exc:
        return f"cannot be resolved ({exc})"
    if _inside(resolved, allowed_roots(roots)):
        return None
    return f"resolves to {resolved}, outside the ingest roots (a symlink out of the root): not read"
