"""Retrieval's start-up hook (run by ``build_services``): its /diagnostics section exists from the start."""

from __future__ import annotations

from app.retrieval.state import register_diagnostics
from app.services.container import Services


def startup(services: Services) -> None:
    """Register the retrieval section of /diagnostics (weights, fusion, quotas, caches)."""
    register_diagnostics(services)
