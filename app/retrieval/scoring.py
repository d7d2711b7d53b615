"""Score arithmetic of hybrid retrieval (pure functions, no I/O).

score_raw   vector similarity (1 + cos) / 2 of the chunk to the question
base_norm   min-max of score_raw over the candidate set (1.0 when all equal; 0 when a chunk has none)
bonus       bm25_weight x bm25_norm + graph reason weight x path factor + degree_weight x degree_norm
composite   base_norm + bonus
final       composite; with a reranker 0.5 composite + 0.5 rerank; with fusion=rrf the RRF score
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from app.core.config import Settings

GRAPH_REASONS = ("entity", "relates", "cooccur", "llm_rel")
REASON_ORDER = ("vector", "bm25", "title", "entity", "llm_rel", "relates", "bridge", "ppr", "cooccur")


@dataclass(frozen=True)
class Weights:
    """Scoring weights (all from settings)."""

    bm25: float = 0.4
    degree: float = 0.1
    entity: float = 0.12
    relates: float = 0.15
    cooccur: float = 0.10
    rel_types: dict[str, float] = field(default_factory=dict)
    rel_default: float = 0.15
    hop_decay: float = 0.5
    fusion: str = "composite"
    rrf_k: int = 60
    bm25_enabled: bool = True
    degree_enabled: bool = True

    @classmethod
    def from_settings(cls, s: Settings) -> Weights:
        return cls(
            bm25=s.retrieval_bm25_weight,
            degree=s.retrieval_degree_weight,
            entity=s.retrieval_weight_entity,
            relates=s.retrieval_weight_relates,
            cooccur=s.retrieval_weight_cooccur,
            rel_types=dict(s.retrieval_rel_type_weights),
            rel_default=s.retrieval_rel_default_weight,
            hop_decay=s.retrieval_hop_decay,
            fusion=s.retrieval_fusion,
            rrf_k=s.retrieval_rrf_k,
            bm25_enabled=s.retrieval_bm25_enabled,
            degree_enabled=s.retrieval_degree_enabled,
        )

    def rel_weight(self, rel_type: str | None, confidence: float | None) -> float:
        """llm_rel reason weight: type weight x confidence (confidence defaults to 1)."""
        conf = 1.0 if confidence is None else max(0.0, min(1.0, float(confidence)))
        return self.rel_types.get((rel_type or "").upper(), self.rel_default) * conf

    def reason_weight(
        self, reason: str, rel_type: str | None = None, confidence: float | None = None
    ) -> float:
        if reason == "llm_rel":
            return self.rel_weight(rel_type, confidence)
        return {"entity": self.entity, "relates": self.relates, "cooccur": self.cooccur}.get(reason, 0.0)

    def path_factor(self, depth: int) -> float:
        """Decay per extra hop: depth 1 -> 1, depth 2 -> decay, ..."""
        return self.hop_decay ** max(0, depth - 1)

    def as_dict(self) -> dict[str, Any]:
        return {
            "bm25": self.bm25,
            "degree": self.degree,
            "entity": self.entity,
            "relates": self.relates,
            "cooccur": self.cooccur,
            "llm_rel": "type weight x confidence",
            "rel_types": self.rel_types,
            "rel_default": self.rel_default,
            "hop_decay": self.hop_decay,
            "fusion": self.fusion,
            "rrf_k": self.rrf_k,
            "bm25_enabled": self.bm25_enabled,
            "degree_enabled": self.degree_enabled,
        }


@dataclass
class Candidate:
    """One candidate chunk with every signal that scores it."""

    id: str
    reasons: list[str] = field(default_factory=list)
    score_raw: float | None = None
    bm25: float = 0.0
    depth: int = 0
    graph_reason: str | None = None
    graph_bonus: float = 0.0
    path_score: float = 0.0
    via: str | None = None
    rel_type: str | None = None
    rel_conf: float | None = None
    degree: int = 0
    vector_rank: int | None = None
    bm25_rank: int | None = None
    graph_rank: int | None = None
    text: str = ""
    located: dict[str, Any] | None = None  # {"location", "section"}: read with the text (None: not read)
    title: str | None = None
    doc_id: str | None = None
    source: str | None = None
    seq: int | None = None
    base_norm: float = 0.0
    bonus: float = 0.0
    composite: float = 0.0
    rerank: float | None = None
    final: float = 0.0
    # multi-hop signals (issue 17: app/retrieval/multihop.py, rerank_features.py)
    title_match: float = 0.0
    bridge: float = 0.0
    ppr: float = 0.0
    overlap: float = 0.0
    features: dict[str, float] | None = None
    contributions: dict[str, float] | None = None  # each feature's share of logit(final), plus "bias"
    pair_rank: int | None = None  # 1 or 2: chosen as a pair (app/retrieval/pairs.py)
    pair_with: str | None = None

    def add_reason(self, reason: str) -> None:
        if reason not in self.reasons:
            self.reasons.append(reason)

    @property
    def reason(self) -> str:
        """The main reason: the first of vector, bm25, entity, llm_rel, relates, cooccur present."""
        for r in REASON_ORDER:
            if r in self.reasons:
                return r
        return self.reasons[0] if self.reasons else "vector"

    def offer_graph(
        self,
        reason: str,
        weight: float,
        depth: int,
        factor: float,
        via: str | None = None,
        rel_type: str | None = None,
        rel_conf: float | None = None,
    ) -> bool:
        """Record a graph path to this chunk; keep the strongest (weight x path factor); True if improved."""
        self.add_reason(reason)
        value = weight * factor
        if value <= self.graph_bonus and self.graph_reason is not None:
            return False
        self.graph_reason, self.graph_bonus, self.path_score = reason, value, factor
        self.via, self.depth = via, depth
        if reason == "llm_rel":
            self.rel_type, self.rel_conf = rel_type, rel_conf
        return True


def min_max(values: list[float]) -> tuple[float, float]:
    return (min(values), max(values)) if values else (0.0, 0.0)


def score(candidates: list[Candidate], weights: Weights) -> None:
    """Fill base_norm, bonus, composite and final on every candidate (in place)."""
    lo, hi = min_max([c.score_raw for c in candidates if c.score_raw is not None])
    max_degree = max((c.degree for c in candidates), default=0)
    for c in candidates:
        if c.score_raw is None:
            c.base_norm = 0.0
        else:
            c.base_norm = (c.score_raw - lo) / (hi - lo) if hi > lo else 1.0
        bm25 = weights.bm25 * c.bm25 if weights.bm25_enabled else 0.0
        degree = (
            weights.degree * (c.degree / max_degree) if weights.degree_enabled and max_degree > 0 else 0.0
        )
        c.bonus = bm25 + c.graph_bonus + degree
        c.composite = c.base_norm + c.bonus
        c.final = c.composite if c.rerank is None else 0.5 * c.composite + 0.5 * c.rerank
    if weights.fusion == "rrf":
        rrf(candidates, weights.rrf_k)


def rrf(candidates: list[Candidate], k: int) -> None:
    """Reciprocal-rank fusion over the vector, BM25, graph (and rerank) rankings."""
    graph = sorted((c for c in candidates if c.graph_reason), key=lambda c: -c.graph_bonus)
    for rank, c in enumerate(graph, 1):
        c.graph_rank = rank
    reranked = sorted((c for c in candidates if c.rerank is not None), key=lambda c: -(c.rerank or 0.0))
    rerank_rank = {c.id: i for i, c in enumerate(reranked, 1)}
    for c in candidates:
        ranks = [r for r in (c.vector_rank, c.bm25_rank, c.graph_rank, rerank_rank.get(c.id)) if r]
        c.final = sum(1.0 / (k + r) for r in ranks)


def rank(candidates: list[Candidate]) -> list[Candidate]:
    """The chosen pair first (pair_rank 1, 2), then by final score; ties by composite then id."""
    return sorted(candidates, key=lambda c: (c.pair_rank or 3, -c.final, -c.composite, c.id))
