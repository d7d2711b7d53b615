"""The browser page served at /ui: plain HTML/CSS/JS in ``static/`` (no build step, no CDN)."""

from __future__ import annotations

from pathlib import Path

STATIC_DIR = Path(__file__).resolve().parent / "static"

# Only these suffixes are served; anything else under static/ is a 404.
CONTENT_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".ico": "image/x-icon",
    ".json": "application/json",
}


def resolve_asset(name: str) -> Path | None:
    """The file for ``/ui/<name>`` inside STATIC_DIR; None if missing, hidden, of unknown type or outside."""
    if not name or "\\" in name or "\x00" in name:
        return None
    parts = name.split("/")
    if any(p in ("", ".", "..") or p.startswith(".") for p in parts):
        return None
    path = (STATIC_DIR / name).resolve()
    try:
        path.relative_to(STATIC_DIR)
    except ValueError:
        return None
    if path.suffix not in CONTENT_TYPES or not path.is_file():
        return None
    return path
