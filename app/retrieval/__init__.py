"""Hybrid graph retrieval and cited answers (no FastAPI here).

Public API (in-process callers such as the CoRAG agent and CONVINSE evidence code):

- ``retrieve(services, question, options=None, embedding=None) -> RetrievalResult``: scored candidates,
  best first (``result.top`` = first ``options.top_k``); each ``Candidate`` has id, text, title, doc_id,
  reason/reasons, score_raw, base_norm, bonus, composite, final, rel_type, rel_conf, depth, path_score, via.
- ``options_from_settings(services, top_k=None, **overrides) -> RetrievalOptions``: settings-based options
  (e.g. ``graph=False, depth=0`` for hybrid only; ``vector=False`` / ``bm25=False``; ``rerank=False``).
- ``retrieve_passages(services, query, top_k) -> [{"id", "contents", "title", "score"}]``: CoRAG passages.
- ``lexical_search(services, question, k) -> [(chunk_id, bm25_norm)]`` and
  ``query_embedding(services, text) -> list[float]`` (cached).
- ``app.retrieval.qa``: ``run_query``, ``stream_query``, ``preview`` (POST /query, /ranking/preview).
"""

from __future__ import annotations

from app.retrieval.hybrid import lexical_search, query_embedding, retrieve
from app.retrieval.options import RetrievalOptions, RetrievalResult, options_from_settings
from app.retrieval.passages import retrieve_passages
from app.retrieval.scoring import Candidate, Weights

__all__ = [
    "Candidate",
    "RetrievalOptions",
    "RetrievalResult",
    "Weights",
    "lexical_search",
    "options_from_settings",
    "query_embedding",
    "retrieve",
    "retrieve_passages",
]
