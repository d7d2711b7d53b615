"""Multi-hop signals over the in-process entity graph (pure functions, no I/O).

For one question and the first stage's candidates (vector + BM25 hits):

1. **title match**: chunks whose title key is one of the question's n-gram keys;
2. **first-stage score**: min-max vector score + 0.4 BM25 + 0.3 title match over those candidates;
3. **bridge**: the entities mentioned by the ``bridge_n`` best first-stage chunks that are the title of
   another chunk bring that chunk in, scored by the relative first-stage score of the chunk that named it
   (question decomposition without an LLM: the first hop's passage names the second hop's subject);
4. **PPR**: Personalized PageRank (``app.retrieval.ppr``) restarting at the question's entities
   (weight 1 / log(1 + chunks naming it), hubs above ``max_freq`` dropped) and at the best first-stage
   chunks; its top ``ppr_top`` chunks join the candidates;
5. **entity overlap**: the question's entities each candidate mentions, rarity-weighted.

``app.retrieval.rerank_features`` turns these signals into the final score.

Signals 1 and 3 (and the title part of 2) need Wikipedia-style titles: names that questions and other
passages use. On a corpus whose titles are file names or ids (``titles_usable`` false: almost no title is
named by another document) they are left out and the reranker's untitled weights score the rest.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from app.retrieval.graph_index import EntityGraph
from app.retrieval.ppr import PushScores, personalized_pagerank_push
from app.retrieval.scoring import Candidate


@dataclass(frozen=True)
class MultihopParams:
    """Knobs of the multi-hop stage (from settings)."""

    bridge_n: int = 5
    ppr_alpha: float = 0.5
    ppr_top: int = 10
    ppr_seed_chunks: float = 1.0
    ppr_eps: float = 1e-5  # push tolerance (app.retrieval.ppr.personalized_pagerank_push)
    max_freq: int = 60
    first_bm25: float = 0.4
    first_title: float = 0.3
    use_ppr: bool = True
    use_titles: bool = True  # bridges (titles named by the first hop); off without usable titles
    entity_top: int = 0  # chunks naming most of the question's entities that join the candidates


# a corpus whose share of titles named by another document (EntityGraph.title_links) is below this has no
# usable titles: the issue-24 train pools with titles 0.135-0.298, the same pools with ids for titles 0.0
TITLE_LINKS_MIN = 0.05
# without usable titles, the chunks naming most of the question's entities that join the candidates
# (MultihopParams.entity_top): 10 and 30 were measured on the train pools' fit halves and did not pay
# (bench/train_reranker.py --entity-top, docs/BENCHMARKS.md), so none
UNTITLED_ENTITY_TOP = 0


# NEORAG_RETRIEVAL_GRAPH_MODE=auto: a corpus without usable titles whose titles are shared by at least
# this many chunks on average (file names of long documents, EntityGraph.chunks_per_title) is ranked by
# the ``bonus`` graph mode. Chosen on train data only (docs/BENCHMARKS.md, issue 24 step 6): the Wikipedia
# train pools have 1.15-1.18 chunks per title (ids for titles: about one passage per id) and ``multihop``
# ranks them better; QMSum train's meeting transcripts have 101 and ``bonus`` ranks them better
AUTO_BONUS_CHUNKS_PER_TITLE = 10.0


def titles_usable(graph: EntityGraph) -> bool:
    """Whether the corpus' titles are names other passages use (else title and bridge signals are off)."""
    return graph.title_links >= TITLE_LINKS_MIN


def auto_graph_mode(graph: EntityGraph) -> str:
    """The graph mode ``auto`` picks for this corpus: ``bonus`` when its titles are file names (unused by
    other passages and shared by many chunks), else ``multihop``."""
    if not titles_usable(graph) and graph.chunks_per_title >= AUTO_BONUS_CHUNKS_PER_TITLE:
        return "bonus"
    return "multihop"


@dataclass
class Signals:
    """Per-question multi-hop signals, by chunk id."""

    title: set[str] = field(default_factory=set)
    first: dict[str, float] = field(default_factory=dict)
    bridge: dict[str, float] = field(default_factory=dict)
    bridge_via: dict[str, str] = field(default_factory=dict)
    ppr: dict[str, float] = field(default_factory=dict)
    overlap: dict[str, float] = field(default_factory=dict)
    entities: list[int] = field(default_factory=list)
    ppr_scores: np.ndarray | None = None  # every chunk row, divided by the peak (0: not reached)


def question_entities(graph: EntityGraph, keys: list[str], max_freq: int) -> list[int]:
    """Entity columns (titles included) named by the question's keys, hubs dropped."""
    cols = []
    for key in keys:
        j = graph.entity_col.get(key)
        if j is not None and 0 < graph.freq[j] <= max_freq:
            cols.append(j)
    return cols


def title_matches(graph: EntityGraph, keys: list[str]) -> set[str]:
    """Chunk ids whose title key is one of ``keys``."""
    return {graph.ids[i] for key in keys for i in graph.by_title.get(key, ())}


def min_max_map(values: dict[str, float]) -> dict[str, float]:
    """Min-max normalised copy (all 1.0 when equal; {} stays {})."""
    if not values:
        return {}
    lo, hi = min(values.values()), max(values.values())
    return {k: ((v - lo) / (hi - lo) if hi > lo else 1.0) for k, v in values.items()}


def first_stage(candidates: list[Candidate], title: set[str], p: MultihopParams) -> dict[str, float]:
    """Min-max vector score + bm25 + title match of each candidate (the hop-1 ranking)."""
    vn = min_max_map({c.id: c.score_raw for c in candidates if c.score_raw is not None})
    return {
        c.id: vn.get(c.id, 0.0) + p.first_bm25 * c.bm25 + p.first_title * (c.id in title) for c in candidates
    }


def hop_two(graph: EntityGraph, keys: list[str], first: dict[str, float], p: MultihopParams,
            signals: Signals) -> None:
    """Bridge, PPR and entity-overlap signals from the first stage (fills ``signals``)."""
    ranked = sorted((cid for cid in first if cid in graph.row), key=lambda cid: (-first[cid], cid))
    top = ranked[: p.bridge_n]
    # relative to the best first-stage chunk even when the graph does not know it yet (ingested since its
    # last build): else the best chunk it knows bridges with full strength
    best = max(first.values(), default=1.0) or 1.0
    for cid in top if p.use_titles else ():
        i = graph.row[cid]
        strength = first[cid] / best
        for j in graph.chunk_entities(i):
            for r in graph.titled.get(j, ()):
                target = graph.ids[r]
                if r != i and strength > signals.bridge.get(target, 0.0):
                    signals.bridge[target] = strength
                    signals.bridge_via[target] = cid
    cols = question_entities(graph, keys, p.max_freq)
    signals.entities = cols
    entity_seeds = {j: 1.0 / math.log1p(float(graph.freq[j])) for j in cols}
    chunk_seeds = {graph.row[cid]: p.ppr_seed_chunks * max(first[cid], 0.0) / best for cid in top}
    pushed = (personalized_pagerank_push(graph.walk, entity_seeds, chunk_seeds, p.ppr_alpha, p.ppr_eps)
              if p.use_ppr else PushScores(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)))
    peak = float(pushed.scores.max()) if pushed.scores.size else 0.0
    if peak > 0:
        normalised = pushed.scores / peak
        signals.ppr_scores = np.zeros(graph.walk.chunks, dtype=np.float32)
        signals.ppr_scores[pushed.rows] = normalised
        k = min(len(pushed.rows), max(p.ppr_top, 1))
        for at in np.argpartition(-normalised, k - 1)[:k].tolist():
            signals.ppr[graph.ids[int(pushed.rows[at])]] = float(normalised[at])
    if cols:
        weights = np.array([entity_seeds[j] for j in cols], dtype=np.float32)
        overlap = np.asarray(graph.by_entity[:, cols] @ weights).ravel()
        top_overlap = float(overlap.max())
        if top_overlap > 0:
            for row in np.nonzero(overlap)[0].tolist():
                signals.overlap[graph.ids[row]] = float(overlap[row]) / top_overlap


def entity_hits(signals: Signals, n: int) -> dict[str, float]:
    """The ``n`` chunks of highest entity overlap (ties by id): candidates of their own."""
    if n <= 0:
        return {}
    best = sorted(signals.overlap, key=lambda cid: (-signals.overlap[cid], cid))[:n]
    return {cid: signals.overlap[cid] for cid in best}


def ppr_of(graph: EntityGraph, signals: Signals, cid: str) -> float:
    """The normalised PPR score of any chunk (0 when the walk never reached it)."""
    if cid in signals.ppr:
        return signals.ppr[cid]
    if signals.ppr_scores is None or cid not in graph.row:
        return 0.0
    return float(signals.ppr_scores[graph.row[cid]])
