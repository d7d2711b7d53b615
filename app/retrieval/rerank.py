"""Optional reranker (off by default): a local cross-encoder directory or a remote rerank URL.

Remote protocol: POST ``{"query": str, "documents": [str]}``; the reply is either ``{"scores": [float]}``
or ``{"results": [{"index": int, "relevance_score": float}]}`` (TEI / Jina / Cohere style).
Scores are min-max normalised to [0, 1] within the reranked set. A failure leaves the ranking unchanged.
"""

from __future__ import annotations

import logging
import math
import threading
from functools import lru_cache
from typing import Any

from app.retrieval.scoring import Candidate
from app.services.container import Services

log = logging.getLogger(__name__)
_lock = threading.Lock()


@lru_cache(maxsize=2)
def _cross_encoder(path: str) -> Any:
    from sentence_transformers import CrossEncoder

    return CrossEncoder(path, device="cpu")


def _remote(url: str, query: str, docs: list[str], timeout_s: float) -> list[float]:
    import httpx

    resp = httpx.post(url, json={"query": query, "documents": docs}, timeout=timeout_s)
    resp.raise_for_status()
    body = resp.json()
    if isinstance(body, dict) and isinstance(body.get("scores"), list):
        return [float(x) for x in body["scores"]]
    results = body.get("results") if isinstance(body, dict) else body
    scores = [0.0] * len(docs)
    for item in results or []:
        scores[int(item["index"])] = float(item.get("relevance_score", item.get("score", 0.0)))
    return scores


def raw_scores(services: Services, query: str, docs: list[str]) -> list[float]:
    """Reranker scores for ``docs`` (raises on failure)."""
    s = services.settings
    if s.rerank_url:
        return _remote(s.rerank_url, query, docs, s.llm_timeout_s)
    if s.rerank_model:
        with _lock:
            model = _cross_encoder(s.rerank_model)
        return [float(x) for x in model.predict([(query, d) for d in docs])]
    raise ValueError("no reranker configured")


def rerank_candidates(services: Services, query: str, candidates: list[Candidate]) -> bool:
    """Set ``rerank`` in [0, 1] on ``candidates``; False (and nothing changed) when the reranker fails."""
    if not candidates:
        return True
    try:
        scores = raw_scores(services, query, [c.text for c in candidates])
    except Exception as exc:  # noqa: BLE001 - an optional stage never breaks retrieval
        log.warning("reranker failed, ranking without it: %s", exc)
        return False
    scores = [x if math.isfinite(x) else 0.0 for x in scores]
    lo, hi = min(scores), max(scores)
    for c, x in zip(candidates, scores, strict=False):
        c.rerank = (x - lo) / (hi - lo) if hi > lo else 1.0
    return True
