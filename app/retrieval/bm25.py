"""Okapi BM25 over chunk texts, in process, as a sparse term x chunk matrix (scipy).

Chosen by measurement (docs/BENCHMARKS.md): the store's full-text indexes rank poorly for BM25 purposes
(RediSearch TF-IDF without length saturation: HotpotQA recall@5 0.10 vs 0.76) and rank_bm25 scans every
document per term (64 ms at 20k chunks). Here a query sums the precomputed BM25 weights of its terms' rows.
The index (with each chunk's title, document, graph degree, text and citation) is built from the store
(``retrieval_chunk_texts``), rebuilt in the background after an ingest
(ingest listener) or when the chunk count changes, and the old index keeps serving meanwhile.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, NamedTuple

import numpy as np
from scipy import sparse

from app.documents.locations import located
from app.retrieval.refreshing import RefreshingIndex, shared_index
from app.retrieval.text import tokenize
from app.retrieval.topk import top_k_indices
from app.store.base import GraphStore

EXTRAS_KEY = "retrieval_bm25"


class SparseBM25:
    """BM25 weights for every (term, chunk); ``search`` is a sparse row sum."""

    def __init__(self, ids: list[str], texts: list[str], k1: float = 1.5, b: float = 0.75) -> None:
        self.ids = ids
        vocab: dict[str, int] = {}
        rows: list[int] = []
        cols: list[int] = []
        tfs: list[int] = []
        lengths = np.zeros(len(texts), dtype=np.float32)
        for col, text in enumerate(texts):
            tokens = tokenize(text)
            lengths[col] = len(tokens)
            for term, tf in Counter(tokens).items():
                rows.append(vocab.setdefault(term, len(vocab)))
                cols.append(col)
                tfs.append(tf)
        self.vocab = vocab
        n = len(texts)
        avgdl = float(lengths.mean()) if n else 1.0
        r, c = np.asarray(rows, dtype=np.int32), np.asarray(cols, dtype=np.int32)
        tf_arr = np.asarray(tfs, dtype=np.float32)
        df = np.bincount(r, minlength=len(vocab)).astype(np.float32)
        idf = np.log1p((n - df + 0.5) / (df + 0.5))
        self.term_idf = idf  # by vocab row
        norm = k1 * (1 - b + b * lengths[c] / max(avgdl, 1e-9))
        weights = idf[r] * tf_arr * (k1 + 1) / (tf_arr + norm)
        self.matrix = sparse.csr_matrix((weights, (r, c)), shape=(len(vocab), n), dtype=np.float32)

    def __len__(self) -> int:
        return len(self.ids)

    def idf(self, terms: list[str]) -> list[float]:
        """BM25's IDF of each term (0.0 for a term no chunk has)."""
        return [float(self.term_idf[self.vocab[t]]) if t in self.vocab else 0.0 for t in terms]

    def search(self, terms: list[str], k: int) -> list[tuple[str, float]]:
        """Top-k (chunk id, score max-normalised to (0, 1]) for the query terms."""
        rows = [self.vocab[t] for t in dict.fromkeys(terms) if t in self.vocab]
        if not rows or not self.ids:
            return []
        scores = np.asarray(self.matrix[rows].sum(axis=0)).ravel()
        k = min(k, int((scores > 0).sum()))
        if k <= 0:
            return []
        top = top_k_indices(scores, k)  # ascending indices within a score: the sort keeps ties by index
        top = top[np.argsort(-scores[top], kind="stable")]
        best = float(scores[top[0]])
        return [(self.ids[i], float(scores[i]) / best) for i in top]

    def memory_bytes(self) -> int:
        m = self.matrix
        return int(m.data.nbytes + m.indices.nbytes + m.indptr.nbytes)


def lexical_heading(title: str | None, section: str | None) -> str:
    """The words indexed before a chunk's text: its title, or its Markdown heading path when that
    already starts with the title (so the title is not counted twice)."""
    title, section = title or "", section or ""
    return section if section and section.startswith(title) else f"{title} {section}".strip()


class ChunkMeta(NamedTuple):
    """Per-chunk metadata kept with the index (saves reading it from the store per request), and the
    chunk's text and citation (``located``) for the candidates a question shows or reranks."""

    title: str | None
    doc_id: str | None
    source: str | None
    seq: int | None
    degree: int
    text: str
    located: dict[str, Any]


class LexicalIndex(RefreshingIndex[SparseBM25]):
    """The process's BM25 index over the store's chunks, kept fresh."""

    label, slug = "BM25 index", "bm25"

    def __init__(self, store: GraphStore, check_every_s: float = 5.0) -> None:
        super().__init__(store, check_every_s)
        self.meta: dict[str, ChunkMeta] = {}

    def _load(self) -> tuple[SparseBM25, int, dict[str, Any]]:
        """Every chunk's title and text as the matrix, and each chunk's metadata (``meta``)."""
        rows = self.store.run("retrieval_chunk_texts")
        index = SparseBM25(
            [str(r["id"]) for r in rows],
            [f"{lexical_heading(r.get('title'), r.get('section'))} {r.get('text') or ''}" for r in rows],
        )
        meta = {
            str(r["id"]): ChunkMeta(
                r.get("title"), r.get("doc_id"), r.get("source"), r.get("seq"), int(r.get("degree") or 0),
                str(r.get("text") or ""), located(r),
            )
            for r in rows
        }
        return index, len(rows), {"meta": meta}

    def _sizes(self, index: SparseBM25 | None) -> dict[str, int]:
        return {"chunks": len(index) if index else 0, "terms": len(index.vocab) if index else 0}

    def search(self, terms: list[str], k: int) -> list[tuple[str, float]]:
        return self.current().search(terms, k)


def lexical_index(extras: dict[str, Any], store: GraphStore) -> LexicalIndex:
    """The BM25 index kept in ``extras`` (registers itself as an ingest listener)."""
    return shared_index(extras, EXTRAS_KEY, lambda: LexicalIndex(store))
