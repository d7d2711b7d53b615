"""The multi-hop graph stage of ``retrieve`` (``NEORAG_RETRIEVAL_GRAPH_MODE=multihop``; ``auto``, the default,
picks it unless the corpus' titles are file names, see ``resolve_graph_mode``).

After the vector and BM25 hits are in the pool: title matches join, their vector scores are read
(one store round trip), bridge and PPR signals are computed in process (``app.retrieval.multihop``) and
their chunks join (a second, smaller round trip); every candidate then carries its signals for
``app.retrieval.rerank_features``. No Cypher graph expansion runs in this mode. After the reranker,
``run_pair_stage`` chooses the first two results together (``app.retrieval.pairs``). On a corpus without
usable titles (``titles_usable``) the title and bridge signals are left out and ``result.untitled`` tells the
reranker and the pair stage to use their untitled weights.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from app.retrieval.bm25 import lexical_index
from app.retrieval.entities import question_keys
from app.retrieval.graph_index import graph_index
from app.retrieval.multihop import (
    UNTITLED_ENTITY_TOP,
    MultihopParams,
    Signals,
    auto_graph_mode,
    entity_hits,
    first_stage,
    hop_two,
    ppr_of,
    title_matches,
    titles_usable,
)
from app.retrieval.pairs import apply_pair, pair_heads
from app.retrieval.scoring import Candidate, rank
from app.services.container import Services

# default-X in `neorag eval retrieval`: signal X off; "trees": the linear reranker instead of the trees
ABLATIONS = ("title", "bridge", "ppr", "pair", "trees")


def resolve_graph_mode(services: Services, mode: str) -> str:
    """``multihop`` or ``bonus``: ``mode`` itself, or for ``auto`` what ``auto_graph_mode`` picks for the
    corpus in the entity graph (kept fresh across ingests)."""
    if mode != "auto":
        return mode
    return auto_graph_mode(graph_index(services.extras, services.store).graph())


def params_from_settings(services: Services, ablate: frozenset[str] = frozenset(),
                         untitled: bool = False) -> MultihopParams:
    """Stage parameters from settings; an ablated signal is switched off (never computed), and so are
    the bridges on a corpus without usable titles (``untitled``)."""
    s = services.settings
    return MultihopParams(
        bridge_n=0 if "bridge" in ablate else s.retrieval_bridge_n,
        ppr_alpha=s.retrieval_ppr_alpha,
        ppr_eps=s.retrieval_ppr_eps,
        ppr_top=s.retrieval_ppr_top,
        max_freq=s.retrieval_entity_max_freq,
        use_ppr="ppr" not in ablate and s.retrieval_ppr_top > 0,
        use_titles=not untitled,
        entity_top=UNTITLED_ENTITY_TOP if untitled else 0,
    )


def run_multihop(
    services: Services,
    question: str,
    pool: Any,
    fill: Callable[[list[str] | None], set[str]],
    result: Any,
    ablate: frozenset[str] = frozenset(),
) -> set[str]:
    """Add title / bridge / PPR candidates to ``pool`` and set their signals; returns the ids found.

    ``pool`` is hybrid's candidate pool (``by_id``, ``get_or_add``); ``fill(ids)`` reads vector scores
    and metadata of ``ids`` (None = all) and returns those found in the store.
    """
    t = time.perf_counter()
    graph = graph_index(services.extras, services.store).graph()
    result.untitled = not titles_usable(graph)
    p = params_from_settings(services, ablate, result.untitled)
    keys = question_keys(question)
    off = "title" in ablate or result.untitled
    signals = Signals(title=set() if off else title_matches(graph, keys))
    budget = pool.max_nodes
    for cid in sorted(signals.title):
        c = pool.get_or_add(cid, budget - len(pool.by_id))
        if c is not None:
            c.add_reason("title")
            c.title_match = 1.0
    result.timings_ms["graph_index"] = _ms(t)
    t = time.perf_counter()
    found = fill(None)
    result.timings_ms["details"] = _ms(t)
    t = time.perf_counter()
    first = first_stage([pool.by_id[cid] for cid in found], signals.title, p)
    hop_two(graph, keys, first, p, signals)
    added: list[str] = []
    for reason, scores in (("bridge", signals.bridge), ("ppr", signals.ppr),
                           ("entity", entity_hits(signals, p.entity_top))):
        for cid in sorted(scores, key=lambda k: (-scores[k], k)):
            existing = cid in pool.by_id
            c = pool.get_or_add(cid, budget - len(pool.by_id))
            if c is None:
                continue
            c.add_reason(reason)
            if not existing:
                added.append(cid)
    for c in pool.by_id.values():
        c.bridge = signals.bridge.get(c.id, 0.0)
        c.ppr = ppr_of(graph, signals, c.id)
        c.overlap = signals.overlap.get(c.id, 0.0)
        if c.id in signals.bridge_via and c.via is None:
            c.via = signals.bridge_via[c.id]
    linked = set(signals.entities)
    result.entities = [{"id": key, "name": key, "freq": int(graph.freq[graph.entity_col[key]])}
                       for key in keys if graph.entity_col.get(key) in linked]
    result.timings_ms["graph"] = _ms(t)
    if added:
        t = time.perf_counter()
        found |= fill(added)
        result.timings_ms["details_hop2"] = _ms(t)
    return found


def run_pair_stage(
    services: Services,
    question: str,
    candidates: list[Candidate],
    load_texts: Callable[[list[Candidate]], None],
    ablate: frozenset[str] = frozenset(),
    untitled: bool = False,
) -> None:
    """Choose results 1 and 2 as a pair among the ``NEORAG_RETRIEVAL_PAIR_TOP`` best documents' chunks
    (their texts are loaded for it: one round trip, reused for the answer); IDF from the in-process BM25
    index when that is the backend, equal word weights otherwise; ``untitled``: the untitled weights."""
    top = services.settings.retrieval_pair_top
    if "pair" in ablate or top < 2:
        return
    heads = pair_heads(rank(candidates), top)
    if len(heads) < 2:
        return
    load_texts(heads)
    idf = None
    if services.settings.retrieval_bm25_backend == "memory":
        idf = lexical_index(services.extras, services.store).current().idf
    apply_pair(heads, question, idf, untitled)


def _ms(t: float) -> float:
    return round((time.perf_counter() - t) * 1000, 2)
