"""The in-process entity graph of multi-hop retrieval: chunk x entity incidence, titles, PPR matrices.

Built from the store (``retrieval_chunk_mentions``: every chunk's title and MENTIONS) like the BM25
index, rebuilt in the background after an ingest or when the chunk count changes (the old one keeps
serving). A chunk's title is one more entity of that chunk (its normalised key, and the key without a
trailing parenthesis: "Lilu (mythology)" -> "lilu"), so a passage is reachable from every chunk that
names it: the Wikipedia-style link that bridge questions follow.

``title_links`` measures whether titles are names at all: the share of title keys that the text of a
chunk of another document names. Wikipedia-style pools score 0.13-0.30; a corpus whose titles are file names
or ids (``p000123``, ``guide.pdf``) scores about 0, and the multi-hop stage then leaves the title signals out
(``app.retrieval.multihop.titles_usable``).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import sparse

from app.retrieval.ppr import BipartiteWalk
from app.retrieval.refreshing import RefreshingIndex, shared_index
from app.store.base import GraphStore
from ingest.normalise import normalise

EXTRAS_KEY = "retrieval_entity_graph"
_PAREN = re.compile(r"\s*\([^)]*\)\s*$")
_WORD = re.compile(r"[0-9A-Za-z]+")
MAX_TITLE_WORDS = 8


def title_keys(title: str | None) -> list[str]:
    """Normalised keys a question may use for a title (with and without a trailing parenthesis)."""
    if not title:
        return []
    keys = {normalise(title)}
    base = _PAREN.sub("", title)
    if base and base != title:
        keys.add(normalise(base))
    return sorted(k for k in keys if len(k) >= 2)


def _words(text: str) -> list[tuple[str, bool]]:
    """(lower-case word, starts a name) pairs: accents stripped, alphanumeric runs."""
    plain = "".join(ch for ch in unicodedata.normalize("NFKD", text) if not unicodedata.combining(ch))
    return [(m.group(0).lower(), m.group(0)[0].isupper() or m.group(0)[0].isdigit())
            for m in _WORD.finditer(plain)]


class TitleMatcher:
    """Finds the titles of other chunks named in a chunk's text (word sequences starting with a capital)."""

    def __init__(self, titles: dict[str, list[str]]) -> None:
        # word-tuple of a title (and of its form without parenthesis) -> its title keys
        self.keys: dict[tuple[str, ...], list[str]] = {}
        self.lengths: dict[str, set[int]] = {}
        for title, keys in titles.items():
            for form in {title, _PAREN.sub("", title)}:
                words = tuple(w for w, _ in _words(form))
                if not words or len(words) > MAX_TITLE_WORDS:
                    continue
                self.keys.setdefault(words, [])
                self.keys[words] = sorted(set(self.keys[words]) | set(keys))
                self.lengths.setdefault(words[0], set()).add(len(words))

    def find(self, text: str) -> set[str]:
        """Title keys named in ``text``."""
        words = _words(text)
        plain = [w for w, _ in words]
        found: set[str] = set()
        for i, (w, cap) in enumerate(words):
            if not cap or w not in self.lengths:
                continue
            for n in self.lengths[w]:
                hit = self.keys.get(tuple(plain[i:i + n]))
                if hit:
                    found.update(hit)
        return found


def title_link_share(by_title: dict[str, list[int]], named: dict[str, set[str]], docs: list[str]) -> float:
    """Share of title keys (``by_title``: key -> chunk rows) named in the text of a chunk of another
    document (``named``: key -> documents naming it; ``docs``: each row's document)."""
    if not by_title:
        return 0.0
    linked = sum(1 for key, rows in by_title.items() if named.get(key, set()) - {docs[r] for r in rows})
    return linked / len(by_title)


def chunks_per_title(rows: list[dict[str, Any]]) -> float:
    """Chunks per distinct title: about 1 for passage corpora (Wikipedia, ids for titles), tens to hundreds
    when titles are file names shared by every chunk of a long document."""
    if not rows:
        return 1.0
    return len(rows) / len({str(r.get("title") or f"\0{r['id']}") for r in rows})


@dataclass
class EntityGraph:
    """Chunks (rows) and entities (columns) with their incidence, titles and frequencies."""

    ids: list[str]
    row: dict[str, int]
    entity_col: dict[str, int]
    incidence: sparse.csr_matrix  # chunks x entities (0/1), titles included
    by_entity: sparse.csc_matrix  # the same, column-major (fast column slices)
    freq: np.ndarray  # chunks per entity column
    by_title: dict[str, list[int]]  # title key -> chunk rows
    titled: dict[int, list[int]]  # entity column -> rows of the chunks it is the title of
    walk: BipartiteWalk
    title_links: float = 0.0  # share of title keys named by another document's chunk (module docstring)
    chunks_per_title: float = 1.0  # chunks per distinct title (an untitled chunk counts as its own title)

    @classmethod
    def build(cls, rows: list[dict[str, Any]]) -> EntityGraph:
        """From ``[{id, title, text, entities}]`` rows: MENTIONS, own title and titles named in the text."""
        ids = [str(r["id"]) for r in rows]
        row = {cid: i for i, cid in enumerate(ids)}
        cols: dict[str, int] = {}
        by_title: dict[str, list[int]] = {}
        r_idx: list[int] = []
        c_idx: list[int] = []
        own = [title_keys(rec.get("title")) for rec in rows]
        docs = [str(rec.get("doc_id") or rec.get("title") or rec["id"]) for rec in rows]
        titles = {str(rec.get("title")): keys for rec, keys in zip(rows, own, strict=True) if keys}
        matcher = TitleMatcher(titles)
        named: dict[str, set[str]] = {}  # title key -> documents whose chunks name it in their text
        for i, rec in enumerate(rows):
            keys = set(str(e) for e in rec.get("entities") or [])
            for key in matcher.find(str(rec.get("text") or "")):
                keys.add(key)
                named.setdefault(key, set()).add(docs[i])
            for key in own[i]:
                by_title.setdefault(key, []).append(i)
                keys.add(key)
            for key in keys:
                r_idx.append(i)
                c_idx.append(cols.setdefault(key, len(cols)))
        data = np.ones(len(r_idx), dtype=np.float32)
        inc = sparse.csr_matrix((data, (r_idx, c_idx)), shape=(len(ids), len(cols)), dtype=np.float32)
        freq = np.asarray(inc.sum(axis=0)).ravel()
        titled = {cols[key]: rows_ for key, rows_ in by_title.items()}
        walk = BipartiteWalk.from_incidence(inc)
        return cls(ids, row, cols, inc, inc.tocsc(), freq, by_title, titled, walk,
                   title_link_share(by_title, named, docs), chunks_per_title(rows))

    def chunk_entities(self, i: int) -> list[int]:
        """Entity columns of chunk row ``i``."""
        start, end = self.incidence.indptr[i], self.incidence.indptr[i + 1]
        return [int(j) for j in self.incidence.indices[start:end]]

    def memory_bytes(self) -> int:
        total = 0
        for m in (self.incidence, self.walk.to_chunks, self.walk.to_entities):
            total += int(m.data.nbytes + m.indices.nbytes + m.indptr.nbytes)
        return total


class GraphIndex(RefreshingIndex[EntityGraph]):
    """The process's entity graph, kept fresh with the BM25 index's rules (stale after an ingest)."""

    label, slug = "entity graph", "entity-graph"

    def _load(self) -> tuple[EntityGraph, int, dict[str, Any]]:
        graph = EntityGraph.build(self.store.run("retrieval_chunk_mentions"))
        return graph, len(graph.ids), {}

    def _sizes(self, index: EntityGraph | None) -> dict[str, int]:
        return {"chunks": len(index.ids) if index else 0, "entities": len(index.entity_col) if index else 0}

    def graph(self) -> EntityGraph:
        return self.current()


def graph_index(extras: dict[str, Any], store: GraphStore) -> GraphIndex:
    """The entity graph kept in ``extras`` (registers itself as an ingest listener)."""
    return shared_index(extras, EXTRAS_KEY, lambda: GraphIndex(store))
