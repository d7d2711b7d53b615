"""CONVINSE's ERS interface on NeoRAG: ``NeoRAGEvidenceRetriever(services).inference_on_turn(turn, sources)``.

Drop-in for CONVINSE's ``EvidenceRetrievalScoring`` subclasses: the pipeline hands a turn whose
``structured_representation`` (or ``question``) is the query; the top-e evidences are stored in
``turn["top_evidences"]`` and returned. ``config`` may carry CONVINSE's ``evs_max_evidences``.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from app.reasoning.adapters import StoreEvidenceBackend
from app.reasoning.evidence import SOURCES, retrieve_evidences
from app.services.container import Services


class NeoRAGEvidenceRetriever:
    """Evidence retrieval and scoring over NeoRAG's KG triples and text chunks, in-process."""

    def __init__(
        self,
        services: Services,
        config: dict[str, Any] | None = None,
        dataset: str | None = None,
        sample_id: str | None = None,
    ) -> None:
        self.services = services
        self.config = dict(config or {})
        self.max_evidences = int(self.config.get("evs_max_evidences", 100))
        self.dataset, self.sample_id = dataset, sample_id
        self.logger = logging.getLogger(__name__)

    def inference_on_turn(
        self, turn: dict[str, Any], sources: Sequence[str] = SOURCES
    ) -> list[dict[str, Any]]:
        """Retrieve the top-e evidences for the turn; sets and returns ``turn["top_evidences"]``."""
        sr = turn.get("structured_representation")
        query = " ".join(sr) if isinstance(sr, list | tuple) else str(sr or "")
        query = query.strip() or str(turn.get("question") or "").strip()
        wanted = [s for s in sources if s in SOURCES]
        backend = StoreEvidenceBackend(self.services, self.dataset, self.sample_id)
        ranked = retrieve_evidences(backend, query, wanted, self.max_evidences) if query and wanted else []
        turn["top_evidences"] = [ev for ev, _ in ranked]
        return turn["top_evidences"]

    def store_cache(self) -> None:
        """Nothing to store: evidences are read from the graph on demand."""

    def train(self) -> None:
        """Nothing to train: scoring is BM25."""
