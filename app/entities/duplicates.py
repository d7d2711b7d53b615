"""Duplicate entity proposals (GET /entities/duplicates).

1. Candidates, without comparing every pair: entities sharing a rare word ("obama" / "barack obama"),
   an acronym and its expansion ("nfl" / "national football league"), close spellings (character
   trigram cosine >= 0.5 among each entity's 10 nearest), and close names by embedding (the
   ``NAME_EMBED_MAX`` most mentioned entities, cosine >= 0.8; embedding every name of a large graph
   costs minutes of CPU).
2. Each candidate is scored: ``WEIGHT_NAME`` x name similarity (app/entities/similarity.py: rules and
   spelling) + ``WEIGHT_NAME_EMBEDDING`` x cosine of the names' embeddings + ``WEIGHT_CONTEXT`` x
   cosine of their contexts (mean embedding of the chunks mentioning each). Numbers that differ veto.
   Only the best ``max(FULL_SCORE_MIN_PAIRS, 4 x limit)`` candidates by name similarity are scored in
   full (name embeddings are cached by the embedder; contexts are one read).
3. Pairs at or above ``min_score`` are returned best first with the evidence: each part of the score,
   the name rule, chunks shared, and where each entity is mentioned.

Precision on a hand-labelled HotpotQA sample: docs/BENCHMARKS.md, "Duplicate entities".
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass
from functools import cached_property
from itertools import combinations
from typing import Any

import numpy as np
from scipy import sparse

from app.core.errors import BadInput
from app.entities.similarity import core, initials, name_similarity, numbers, tokens, trigrams
from app.services.container import Services

# chosen by 2-fold cross-validation on the labelled HotpotQA pairs (bench/entity_duplicates.py); the a-priori
# 0.5 / 0.2 / 0.3 ranked worse: same-paragraph pairs have near-identical contexts whether duplicates or not
WEIGHT_NAME, WEIGHT_NAME_EMBEDDING, WEIGHT_CONTEXT = 0.8, 0.1, 0.1
RARE_WORD_MAX_ENTITIES = 30
SPELLING_NEIGHBOURS, SPELLING_MIN = 10, 0.5
NAME_EMBED_MAX, NAME_EMBED_NEIGHBOURS, NAME_EMBED_MIN = 1000, 5, 0.8
FULL_SCORE_MIN_PAIRS = 400  # candidates scored in full (embeddings, context): the best by name, >= 4 x limit
CONTEXT_CHUNKS = 8
MAX_PAIRS = 500
BLOCK = 2000
POSSESSIVE_MARKS = ("'", "\u2019")


@dataclass
class Entity:
    id: str
    name: str
    freq: int
    aliases: list[str]

    @cached_property
    def possessive(self) -> bool:
        """Whether a trailing " s" of the key is a possessive (a surface form has "'s")."""
        return any(q + "s" in form.lower() for form in [self.name, *self.aliases] for q in POSSESSIVE_MARKS)

    @cached_property
    def key(self) -> str:
        return core(self.id, self.possessive) or self.id


def _rare_word_pairs(ents: list[Entity]) -> set[tuple[int, int]]:
    """Pairs where every word of one name is in the other and a shared word is rare."""
    by_word: dict[str, list[int]] = defaultdict(list)
    words = [set(tokens(e.key)) for e in ents]
    for i, ws in enumerate(words):
        for w in ws:
            if len(w) > 2:
                by_word[w].append(i)
    out: set[tuple[int, int]] = set()
    for members in by_word.values():
        if 1 < len(members) <= RARE_WORD_MAX_ENTITIES:
            for i, j in combinations(members, 2):
                if words[i] <= words[j] or words[j] <= words[i]:
                    out.add((min(i, j), max(i, j)))
    return out


def _acronym_pairs(ents: list[Entity]) -> set[tuple[int, int]]:
    """Pairs of a one-word (or spaced-letter) name and a multi-word name with those initials."""
    by_initials: dict[str, list[int]] = defaultdict(list)
    for i, e in enumerate(ents):
        if len(tokens(e.key)) >= 2:
            by_initials[initials(e.key)].append(i)
    out: set[tuple[int, int]] = set()
    for i, e in enumerate(ents):
        letters = e.key.replace(" ", "")
        if (
            len(letters) >= 2
            and letters.isalpha()
            and (len(tokens(e.key)) == 1 or len(letters) == len(tokens(e.key)))
        ):
            for j in by_initials.get(letters, [])[:RARE_WORD_MAX_ENTITIES]:
                if j != i:
                    out.add((min(i, j), max(i, j)))
    return out


def _nearest_pairs(matrix: Any, k: int, minimum: float) -> set[tuple[int, int]]:
    """Pairs among each row's ``k`` nearest rows (cosine of L2-normalised rows) scoring >= ``minimum``."""
    out: set[tuple[int, int]] = set()
    n = matrix.shape[0]
    if n < 2:
        return out
    for start in range(0, n, BLOCK):
        block = matrix[start : start + BLOCK] @ matrix.T
        dense = block.toarray() if sparse.issparse(block) else np.asarray(block)
        for r in range(dense.shape[0]):
            i = start + r
            dense[r, i] = -1.0
            top = np.argpartition(-dense[r], min(k, n - 1) - 1)[:k]
            for j in top:
                if dense[r, j] >= minimum:
                    out.add((min(i, int(j)), max(i, int(j))))
    return out


def _spelling_pairs(ents: list[Entity]) -> set[tuple[int, int]]:
    vocab: dict[str, int] = {}
    rows, cols, vals = [], [], []
    for i, e in enumerate(ents):
        for gram, n in trigrams(e.key).items():
            rows.append(i)
            cols.append(vocab.setdefault(gram, len(vocab)))
            vals.append(float(n))
    m = sparse.csr_matrix((vals, (rows, cols)), shape=(len(ents), max(1, len(vocab))), dtype=np.float32)
    df = np.bincount(m.indices, minlength=m.shape[1]).astype(np.float32)
    m = m.multiply(np.log1p(len(ents) / np.maximum(df, 1.0))).tocsr()
    norms = np.sqrt(m.multiply(m).sum(axis=1)).A.ravel()
    m = sparse.diags(1.0 / np.maximum(norms, 1e-9)) @ m
    return _nearest_pairs(m.tocsr(), SPELLING_NEIGHBOURS, SPELLING_MIN)


def _unit(vectors: list[list[float]]) -> np.ndarray:
    arr = np.asarray(vectors, dtype=np.float32)
    return arr / np.maximum(np.linalg.norm(arr, axis=1, keepdims=True), 1e-9)


def _context(services: Services, ids: list[str]) -> dict[str, tuple[np.ndarray | None, list[dict[str, Any]]]]:
    """Each entity's mean context embedding (None without embedded chunks) and its chunks' ids/titles."""
    out: dict[str, tuple[np.ndarray | None, list[dict[str, Any]]]] = {}
    for start in range(0, len(ids), 500):
        for row in services.store.run(
            "entity_context", {"ids": ids[start : start + 500], "limit": CONTEXT_CHUNKS}
        ):
            chunks = row.get("chunks") or []
            vecs = [c["embedding"] for c in chunks if c.get("embedding")]
            mean = _unit([np.mean(_unit(vecs), axis=0).tolist()])[0] if vecs else None
            out[str(row["id"])] = (mean, [{"id": c["id"], "title": c.get("title")} for c in chunks[:3]])
    return out


def _validate(min_score: float | None, limit: int, default: float) -> float:
    score = default if min_score is None else float(min_score)
    if not 0.0 <= score <= 1.0 or math.isnan(score):
        raise BadInput("min_score: between 0 and 1", field="min_score")
    if not 1 <= limit <= MAX_PAIRS:
        raise BadInput(f"limit: between 1 and {MAX_PAIRS}", field="limit")
    return score


def propose(services: Services, min_score: float | None = None, limit: int = 50) -> dict[str, Any]:
    """``{pairs: [{a, b, score, suggested_target, evidence}], entities_compared, candidates, min_score}``."""
    s = services.settings
    threshold = _validate(min_score, limit, s.entity_dup_min_score)
    rows = services.store.run("entity_all", {"limit": s.entity_dup_max_entities})
    ents = [
        Entity(
            str(r["id"]), str(r.get("name") or r["id"]), int(r.get("freq") or 0), list(r.get("aliases") or [])
        )
        for r in rows
    ]
    pairs = _rare_word_pairs(ents) | _acronym_pairs(ents) | _spelling_pairs(ents) if len(ents) > 1 else set()
    top = min(len(ents), NAME_EMBED_MAX)
    if top > 1:
        names = _unit(services.embedder.embed([e.name for e in ents[:top]]))
        pairs |= _nearest_pairs(names, NAME_EMBED_NEIGHBOURS, NAME_EMBED_MIN)
    scored = []
    for i, j in pairs:
        sim, rule = name_similarity(ents[i].id, ents[j].id, (ents[i].possessive, ents[j].possessive))
        if rule == "numbers_differ" or numbers(ents[i].id) != numbers(ents[j].id):
            continue
        scored.append((i, j, sim, rule))
    # the best candidates by name alone get the (costlier) embedding and context parts
    scored.sort(key=lambda x: -x[2])
    scored = [x for x in scored if WEIGHT_NAME * x[2] + WEIGHT_NAME_EMBEDDING + WEIGHT_CONTEXT >= threshold]
    scored = scored[: max(FULL_SCORE_MIN_PAIRS, 4 * limit)]
    involved = sorted({ents[k].id for i, j, _, _ in scored for k in (i, j)})
    by_id = {e.id: e for e in ents}
    name_vec = (
        dict(zip(involved, _unit(services.embedder.embed([by_id[i].name for i in involved])), strict=True))
        if involved
        else {}
    )
    ctx = _context(services, involved)
    out = []
    for i, j, sim, rule in scored:
        a, b = ents[i], ents[j]
        name_cos = float(np.dot(name_vec[a.id], name_vec[b.id]))
        ca, cb = ctx.get(a.id, (None, [])), ctx.get(b.id, (None, []))
        ctx_cos = float(np.dot(ca[0], cb[0])) if ca[0] is not None and cb[0] is not None else 0.0
        score = (
            WEIGHT_NAME * sim
            + WEIGHT_NAME_EMBEDDING * max(0.0, name_cos)
            + WEIGHT_CONTEXT * max(0.0, ctx_cos)
        )
        if score >= threshold:
            out.append(
                (
                    score,
                    a,
                    b,
                    {
                        "name": round(sim, 4),
                        "rule": rule,
                        "name_embedding": round(name_cos, 4),
                        "context": round(ctx_cos, 4),
                        "a_chunks": ca[1],
                        "b_chunks": cb[1],
                    },
                )
            )
    out.sort(key=lambda x: (-x[0], x[1].id, x[2].id))
    shared = _shared(services, [(a.id, b.id) for _, a, b, _ in out[:limit]])
    pairs_out = []
    for score, a, b, ev in out[:limit]:
        ev["shared_chunks"] = shared.get((a.id, b.id), 0)
        target = a if (a.freq, len(a.name)) >= (b.freq, len(b.name)) else b
        pairs_out.append(
            {
                "a": _public(a),
                "b": _public(b),
                "score": round(score, 4),
                "suggested_target": target.id,
                "evidence": ev,
            }
        )
    return {
        "pairs": pairs_out,
        "entities_compared": len(ents),
        "candidates": len(scored),
        "min_score": threshold,
    }


def _public(e: Entity) -> dict[str, Any]:
    return {"id": e.id, "name": e.name, "freq": e.freq, "aliases": e.aliases[:10]}


def _shared(services: Services, pairs: list[tuple[str, str]]) -> dict[tuple[str, str], int]:
    if not pairs:
        return {}
    rows = services.store.run("entity_pair_cooccur", {"rows": [{"a": a, "b": b} for a, b in pairs]})
    return {(str(r["a"]), str(r["b"])): int(r.get("count") or 0) for r in rows}
