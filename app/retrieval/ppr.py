"""Personalized PageRank over the chunk-entity graph (HippoRAG style), pure numpy/scipy, no I/O.

The walk runs on the bipartite graph of passages (chunks) and entities: a chunk links to the entities it
mentions (its title counts as one of them), an entity to the chunks that mention it. Each step a walker
either restarts at the personalization (the question's entities, weighted by rarity, and a little mass
on the first stage's best passages) with probability ``alpha`` or moves to a uniformly chosen neighbour.
Entity-to-entity edges are not needed: two entities sharing a chunk are two steps apart through it,
which is exactly what co-occurrence encodes (so CO_OCCURS can stay small, see ``ingest/cooccur.py``).

Retrieval uses ``personalized_pagerank_push``: the same walk solved locally from the seeds, so a question
costs about the same at 10k and 100k chunks (issue 23: 20 ms -> 1.4 ms per question at 100k).
``personalized_pagerank`` (power iteration over the whole graph) is the reference it is tested against.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import sparse


@dataclass
class BipartiteWalk:
    """Row-normalised transition matrices of a chunk x entity incidence matrix."""

    to_entities: sparse.csr_matrix  # (entities x chunks): p_entities = to_entities @ p_chunks
    to_chunks: sparse.csr_matrix  # (chunks x entities): p_chunks = to_chunks @ p_entities

    @classmethod
    def from_incidence(cls, incidence: sparse.csr_matrix) -> BipartiteWalk:
        """Walk matrices from a 0/1 chunk x entity matrix (duplicates are collapsed to 1)."""
        m = incidence.tocsr(copy=True)
        m.sum_duplicates()
        m.data[:] = 1.0
        m = m.astype(np.float32)
        chunk_deg = np.asarray(m.sum(axis=1)).ravel()
        entity_deg = np.asarray(m.sum(axis=0)).ravel()
        c2e = sparse.diags(1.0 / np.maximum(chunk_deg, 1.0)).dot(m)  # each chunk's row sums to 1
        e2c = sparse.diags(1.0 / np.maximum(entity_deg, 1.0)).dot(m.T)  # each entity's row sums to 1
        return cls(c2e.T.tocsr().astype(np.float32), e2c.T.tocsr().astype(np.float32))

    @property
    def chunks(self) -> int:
        return int(self.to_chunks.shape[0])

    @property
    def entities(self) -> int:
        return int(self.to_entities.shape[0])

    @property
    def chunk_degree(self) -> np.ndarray:
        """Entities per chunk (row lengths of ``to_chunks``)."""
        return np.diff(self.to_chunks.indptr)

    @property
    def entity_degree(self) -> np.ndarray:
        """Chunks per entity (row lengths of ``to_entities``)."""
        return np.diff(self.to_entities.indptr)


def _restart(walk: BipartiteWalk, entity_seeds: dict[int, float], chunk_seeds: dict[int, float], alpha: float,
             dtype: type) -> tuple[np.ndarray, np.ndarray] | None:
    """The restart distribution over (entities, chunks), normalised to sum 1; None without positive seeds."""
    if not 0.0 < alpha <= 1.0:
        raise ValueError("alpha must be in (0, 1]")
    restart_e: np.ndarray = np.zeros(walk.entities, dtype=dtype)
    restart_c: np.ndarray = np.zeros(walk.chunks, dtype=dtype)
    for j, w in entity_seeds.items():
        restart_e[j] += max(0.0, float(w))
    for i, w in chunk_seeds.items():
        restart_c[i] += max(0.0, float(w))
    total = float(restart_e.sum() + restart_c.sum())
    if total <= 0.0:
        return None
    return restart_e / total, restart_c / total


def personalized_pagerank(
    walk: BipartiteWalk,
    entity_seeds: dict[int, float],
    chunk_seeds: dict[int, float],
    alpha: float = 0.5,
    iterations: int = 8,
    tol: float = 1e-6,
) -> np.ndarray:
    """Stationary chunk scores of a PPR walk restarting at the given seeds (all zeros without seeds).

    ``entity_seeds`` / ``chunk_seeds`` map column / row indexes to non-negative weights; they are
    normalised together to one restart distribution. ``alpha`` is the restart probability; with 0.5, 8
    iterations leave an error below 0.1 % of the top score (the top 20 equal those of 100 iterations on
    HotpotQA's 5.7k-chunk graph, at a seventh of the time). Mass that
    reaches a node without edges is dropped (scores are only compared with each other).
    """
    restart = _restart(walk, entity_seeds, chunk_seeds, alpha, np.float32)
    if restart is None:
        return np.zeros(walk.chunks, dtype=np.float32)
    restart_e, restart_c = restart
    p_e, p_c = restart_e.copy(), restart_c.copy()
    for _ in range(iterations):
        new_e = alpha * restart_e + (1.0 - alpha) * (walk.to_entities @ p_c)
        new_c = alpha * restart_c + (1.0 - alpha) * (walk.to_chunks @ p_e)
        delta = float(np.abs(new_c - p_c).sum() + np.abs(new_e - p_e).sum())
        p_e, p_c = new_e, new_c
        if delta < tol:
            break
    return p_c


@dataclass
class PushScores:
    """Chunk scores of a local push: only the chunks the walk reached (``rows``, ``scores``)."""

    rows: np.ndarray
    scores: np.ndarray
    pushes: int = 0  # node pushes done (the work, for diagnostics and tests)


def _neighbours(indptr: np.ndarray, indices: np.ndarray, nodes: np.ndarray,
                amounts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every (neighbour, amount of its node) pair of ``nodes`` in a CSR structure, one row per edge."""
    starts = indptr[nodes]
    lens = indptr[nodes + 1] - starts
    total = int(lens.sum())
    if total == 0:
        return np.zeros(0, dtype=indices.dtype), np.zeros(0)
    offsets = np.repeat(starts - (np.cumsum(lens) - lens), lens) + np.arange(total)
    return indices[offsets], np.repeat(amounts, lens)


def personalized_pagerank_push(
    walk: BipartiteWalk,
    entity_seeds: dict[int, float],
    chunk_seeds: dict[int, float],
    alpha: float = 0.5,
    eps: float = 1e-5,
    max_rounds: int = 60,
) -> PushScores:
    """The same PPR as ``personalized_pagerank``, computed locally by residual pushes (Andersen, Chung and
    Lang's forward push), so its cost follows the seeds' neighbourhood instead of the whole graph.

    A node holding residual ``r >= eps * degree`` keeps ``alpha * r`` as its score and hands ``(1 - alpha)
    * r`` to its neighbours in equal parts; all such nodes push together each round. When no node is left
    above its threshold, every chunk's score is within ``eps * degree`` of the exact stationary value (the
    restart distribution sums to 1), and the pushes done are at most ``1 / (alpha * eps)`` edge visits.
    """
    if eps <= 0.0:
        raise ValueError("eps must be positive")
    restart = _restart(walk, entity_seeds, chunk_seeds, alpha, np.float64)
    if restart is None:
        return PushScores(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32))
    r_e, r_c = restart  # the residuals start as the restart distribution
    n_c = walk.chunks
    deg_c = np.maximum(walk.chunk_degree, 1).astype(np.float64)
    deg_e = np.maximum(walk.entity_degree, 1).astype(np.float64)
    c_ptr, c_idx = walk.to_chunks.indptr, walk.to_chunks.indices  # chunk -> its entities
    e_ptr, e_idx = walk.to_entities.indptr, walk.to_entities.indices  # entity -> its chunks
    x_c = np.zeros(n_c)
    act_c = np.array(sorted(chunk_seeds), dtype=np.int64)
    act_e = np.array(sorted(entity_seeds), dtype=np.int64)
    act_c = act_c[r_c[act_c] >= eps * deg_c[act_c]] if act_c.size else act_c
    act_e = act_e[r_e[act_e] >= eps * deg_e[act_e]] if act_e.size else act_e
    pushes = 0
    for _ in range(max_rounds):
        if not act_c.size and not act_e.size:
            break
        pushes += int(act_c.size + act_e.size)
        m_c, m_e = r_c[act_c], r_e[act_e]
        r_c[act_c] = 0.0
        r_e[act_e] = 0.0
        x_c[act_c] += alpha * m_c
        to_e, amount_e = _neighbours(c_ptr, c_idx, act_c, (1.0 - alpha) * m_c / deg_c[act_c])
        to_c, amount_c = _neighbours(e_ptr, e_idx, act_e, (1.0 - alpha) * m_e / deg_e[act_e])
        np.add.at(r_e, to_e, amount_e)
        np.add.at(r_c, to_c, amount_c)
        to_e = np.unique(to_e)
        to_c = np.unique(to_c)
        act_e = to_e[r_e[to_e] >= eps * deg_e[to_e]]
        act_c = to_c[r_c[to_c] >= eps * deg_c[to_c]]
    rows = np.flatnonzero(x_c)
    return PushScores(rows, x_c[rows].astype(np.float32), pushes)
