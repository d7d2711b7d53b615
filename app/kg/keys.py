"""Key strings shared by the KG loader and readers (one place, so both always agree)."""

from __future__ import annotations


def sample_key(dataset: str, sample_id: str) -> str:
    """``KGSample.key``: ``<dataset>/<sample_id>``."""
    return f"{dataset}/{sample_id}"


def entity_key(dataset: str, name: str) -> str:
    """``KGEntity.key``: ``<dataset>/<name>`` (one entity per name per dataset)."""
    return f"{dataset}/{name}"


def fold(name: str) -> str:
    """The case-insensitive, trimmed form used for fallback matching."""
    return name.strip().lower()


def entity_lkey(dataset: str, name: str) -> str:
    """``KGEntity.lkey``: ``<dataset>/<folded name>``."""
    return f"{dataset}/{fold(name)}"


def facts_key(skey: str, name: str) -> str:
    """``KGFacts.key``: ``<sample key>|<entity name>``."""
    return f"{skey}|{name}"


def facts_lkey(skey: str, name: str) -> str:
    """``KGFacts.lkey``: ``<sample key>|<folded entity name>``."""
    return f"{skey}|{fold(name)}"
