"""Graph expansion of the "bonus" graph mode: paths from the question's entities and the best direct
candidates to more chunks, in two rounds (depth 1, depth 2) under the node quotas of the candidate pool."""

from __future__ import annotations

from typing import Any, NamedTuple

from app.retrieval.options import RetrievalOptions, RetrievalResult
from app.retrieval.scoring import Candidate, Weights
from app.services.container import Services


class Pool:
    """Candidates by id, with the node quota."""

    def __init__(self, max_nodes: int) -> None:
        self.by_id: dict[str, Candidate] = {}
        self.max_nodes = max_nodes

    def get_or_add(self, cid: str, budget_left: int) -> Candidate | None:
        """The candidate of ``cid``, added while the budget and the node quota allow (else None)."""
        c = self.by_id.get(cid)
        if c is None and budget_left > 0 and len(self.by_id) < self.max_nodes:
            c = self.by_id[cid] = Candidate(cid)
        return c


class Offer(NamedTuple):
    """One graph path to a chunk: reason weight, hop depth and the strength of where it started."""

    weight: float
    id: str
    reason: str
    depth: int
    via: str | None = None
    rel_type: str | None = None
    conf: float | None = None
    strength: float = 1.0


def seed_strengths(pool: Pool, n: int, propagate: bool) -> dict[str, float]:
    """Best direct candidates (vector + 0.4 x BM25) with their strength relative to the best one."""
    direct = [c for c in pool.by_id.values() if c.vector_rank or c.bm25_rank]
    prelim = {c.id: (c.score_raw or 0.0) + 0.4 * c.bm25 for c in direct}
    best = sorted(direct, key=lambda c: -prelim[c.id])[:n]
    top = prelim[best[0].id] if best else 1.0
    return {c.id: (prelim[c.id] / top if propagate and top > 0 else 1.0) for c in best}


def expand(
    services: Services,
    entities: list[dict[str, Any]],
    opts: RetrievalOptions,
    weights: Weights,
    pool: Pool,
    result: RetrievalResult,
) -> None:
    """Graph expansion in two rounds (depth 1, depth 2) under the node quotas."""
    store = services.store
    result.entities = [{"id": e["id"], "name": e["name"], "freq": e.get("freq")} for e in entities]
    entity_ids = [e["id"] for e in entities]
    names = {e["id"]: e["name"] for e in entities}
    offers: list[Offer] = []
    seeds = seed_strengths(pool, opts.seed_k, services.settings.retrieval_seed_strength)
    # depth 1: chunks naming question entities; neighbours of the seed chunks
    if entity_ids:
        for row in store.run("retrieval_entity_chunks", {"ids": entity_ids, "per_entity": opts.per_entity}):
            offers.append(Offer(weights.entity, str(row["id"]), "entity", 1, names.get(row["entity"])))
    offers += neighbour_offers(store, seeds, opts, weights, depth=1)
    depth1_budget = opts.max_nodes - (opts.depth2_reserve if opts.depth >= 2 else 0) - len(pool.by_id)
    new1 = apply_offers(pool, offers, weights, depth1_budget)
    if opts.depth < 2:
        return
    offers = []
    if entity_ids:
        for row in store.run(
            "retrieval_cooccur_chunks",
            {"ids": entity_ids, "per_entity": opts.per_entity, "max_freq": opts.max_freq},
        ):
            offers.append(Offer(weights.cooccur, str(row["id"]), "cooccur", 2, names.get(row["entity"])))
    ranked1 = sorted((pool.by_id[i] for i in new1), key=lambda c: -c.graph_bonus)[: opts.seed_k]
    frontier = {c.id: c.path_score for c in ranked1}
    offers += neighbour_offers(store, frontier, opts, weights, depth=2)
    apply_offers(pool, offers, weights, opts.max_nodes - len(pool.by_id))


def neighbour_offers(
    store: Any, seeds: dict[str, float], opts: RetrievalOptions, weights: Weights, depth: int
) -> list[Offer]:
    """RELATES_TO / REL neighbours and chunks sharing a non-hub entity, for every seed."""
    if not seeds:
        return []
    ids = list(seeds)
    offers: list[Offer] = []
    for row in store.run("retrieval_expand_chunks", {"ids": ids, "per_seed": opts.per_entity}):
        src = str(row["src"])
        if row["kind"] == "REL":
            conf = None if row.get("conf") is None else float(row["conf"])
            weight = weights.rel_weight(row.get("rel_type"), conf)
            offers.append(
                Offer(
                    weight,
                    str(row["id"]),
                    "llm_rel",
                    depth,
                    src,
                    row.get("rel_type"),
                    conf,
                    seeds.get(src, 1.0),
                )
            )
        else:
            offers.append(
                Offer(weights.relates, str(row["id"]), "relates", depth, src, strength=seeds.get(src, 1.0))
            )
    params = {
        "ids": ids,
        "per_entity": opts.per_entity,
        "max_freq": opts.max_freq,
        "max_entities": opts.per_entity,
    }
    for row in store.run("retrieval_expand_entities", params):
        src = str(row["src"])
        offers.append(
            Offer(
                weights.relates,
                str(row["id"]),
                "relates",
                depth,
                f"{src} via {row['name']}",
                strength=seeds.get(src, 1.0),
            )
        )
    return offers


def apply_offers(pool: Pool, offers: list[Offer], weights: Weights, budget: int) -> list[str]:
    """Give each offered path to its chunk (strongest first); new chunks only while ``budget`` lasts."""
    added: list[str] = []
    ranked = sorted(offers, key=lambda o: (-o.weight * o.strength * weights.path_factor(o.depth), o.id))
    for o in ranked:
        existing = o.id in pool.by_id
        c = pool.get_or_add(o.id, budget - len(added))
        if c is None:
            continue
        if not existing:
            added.append(o.id)
        c.offer_graph(
            o.reason, o.weight, o.depth, weights.path_factor(o.depth) * o.strength, o.via, o.rel_type, o.conf
        )
    return added
