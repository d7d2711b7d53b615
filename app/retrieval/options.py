"""What one retrieval call may do (``RetrievalOptions``, from settings), and what it found."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from app.retrieval.scoring import Candidate
from app.services.container import Services


@dataclass
class RetrievalOptions:
    """Per-call knobs; defaults come from settings (see ``options_from_settings``)."""

    top_k: int = 8
    depth: int = 2
    vector: bool = True
    bm25: bool = True
    graph: bool = True
    seed_k: int = 8
    oversample: int = 4
    max_nodes: int = 120
    depth2_reserve: int = 20
    per_entity: int = 6
    max_freq: int = 60
    min_vector: float = 0.0
    rerank: bool = True
    texts: bool = True  # load chunk texts of the top_k (preview and evaluation do not need them)
    graph_mode: str = "auto"  # "multihop" (multihop_stage.py), "bonus" (expand.py), "auto" (one by corpus)
    ablate: frozenset[str] = frozenset()  # multihop signals off: title, bridge, ppr, pair, trees (evaluation)


@dataclass
class RetrievalResult:
    """Ranked candidates (all of them; ``top`` is the first top_k) and how they were found."""

    question: str
    candidates: list[Candidate]
    top_k: int
    degraded: bool = False
    degraded_reasons: list[str] = field(default_factory=list)
    entities: list[dict[str, Any]] = field(default_factory=list)
    empty_graph: bool = False
    timings_ms: dict[str, float] = field(default_factory=dict)
    untitled: bool = False  # multi-hop: the corpus has no usable titles (title and bridge signals off)
    reranker: str | None = None  # multi-hop: "trees" or "linear" (rerank_features), None otherwise
    graph_mode: str | None = None  # the graph stage that ran, "multihop" or "bonus" (never "auto"); None: off

    @property
    def top(self) -> list[Candidate]:
        return self.candidates[: self.top_k]


def options_from_settings(services: Services, top_k: int | None = None, **overrides: Any) -> RetrievalOptions:
    """Options from settings, with a request's top_k and explicit overrides."""
    s = services.settings
    opts = RetrievalOptions(
        top_k=top_k or s.retrieval_top_k,
        depth=s.retrieval_max_depth if s.retrieval_graph_enabled else 0,
        bm25=s.retrieval_bm25_enabled,
        graph=s.retrieval_graph_enabled,
        seed_k=s.retrieval_seed_k,
        oversample=s.retrieval_oversample,
        max_nodes=s.retrieval_max_nodes,
        depth2_reserve=s.retrieval_depth2_reserve,
        per_entity=s.retrieval_per_entity_limit,
        max_freq=s.retrieval_entity_max_freq,
        min_vector=s.retrieval_entity_chunk_min_vector,
        graph_mode=s.retrieval_graph_mode,
    )
    for key, value in overrides.items():
        setattr(opts, key, value)
    return opts
