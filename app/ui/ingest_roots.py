"""What the Ingest view suggests: the configured ingest roots and what lies directly inside them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ingest.load import SUPPORTED_SUFFIXES
from ingest.paths import allowed_roots

MAX_ENTRIES = 200


def ingest_choices(roots: list[Path]) -> dict[str, Any]:
    """``{roots: [{path, exists}], paths: [str]}``: each existing root, then its visible sub-folders and
    supported files one level down (sorted, at most MAX_ENTRIES in all)."""
    out_roots = []
    paths: list[str] = []
    for root in allowed_roots(roots):
        exists = root.is_dir()
        out_roots.append({"path": str(root), "exists": exists})
        if not exists:
            continue
        paths.append(str(root))
        try:
            children = sorted(root.iterdir(), key=lambda p: p.name.lower())
        except OSError:
            continue
        for child in children:
            if len(paths) >= MAX_ENTRIES:
                break
            if child.name.startswith("."):
                continue
            if child.is_dir() or child.suffix.lower() in SUPPORTED_SUFFIXES:
                paths.append(str(child))
    return {"roots": out_roots, "paths": paths[:MAX_ENTRIES]}
