"""Helpers for ingest tests: services on a test store, graph counts and schema invariants."""

from __future__ import annotations

from collections import Counter
from itertools import combinations
from typing import Any

from app.core.config import Settings
from app.services.container import Services
from app.services.embedder import Embedder
from app.services.llm import LLMClient
from app.store.base import GraphStore
from ingest.cooccur import cooccur_rows


def make_services(settings: Settings, store: GraphStore, embedder: Embedder,
                  llm_url: str | None = None) -> Services:
    """Services over the test's store (no HTTP app)."""
    llm = LLMClient(llm_url, "x", "scripted", timeout_s=10, max_retries=0) if llm_url else None
    return Services(settings, store, embedder, llm)


def q(store: GraphStore, text: str, params: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """An ad-hoc read (test assertions only)."""
    return store._execute(text, params or {}, False)


def counts(store: GraphStore) -> dict[str, int]:
    """Node counts per label and relationship counts per type."""
    out = {f"node:{r['label']}": r["count"] for r in store.run("count_nodes_by_label")}
    out.update({f"rel:{r['type']}": r["count"] for r in store.run("count_rels_by_type")})
    return out


def assert_invariants(store: GraphStore, dim: int = 384, min_count: int = 2, top_k: int = 5) -> None:
    """freq = chunks mentioning; no orphan entities/documents; CO_OCCURS exactly the bounded set
    (ingest/cooccur.py, defaults as the settings) and lower->higher id."""
    bad_freq = q(store, "MATCH (e:Entity) OPTIONAL MATCH (:Chunk)-[m:MENTIONS]->(e) WITH e, count(m) AS n "
                        "WHERE n <> e.freq OR n = 0 RETURN e.id AS id, n, e.freq AS freq")
    assert bad_freq == [], bad_freq[:5]
    orphans = q(store, "MATCH (d:Document) OPTIONAL MATCH (d)-[h:HAS_CHUNK]->(:Chunk) WITH d, count(h) AS n "
                       "WHERE n = 0 RETURN d.id AS id")
    assert orphans == []
    chunks = q(store, "MATCH (d:Document)-[:HAS_CHUNK]->(c:Chunk) RETURN c.id AS id, c.doc_id AS doc, "
                      "d.id AS d, c.title AS title, d.title AS dtitle, c.source AS source, c.hash AS hash, "
                      "c.embedding AS emb")
    assert all(r["doc"] == r["d"] and r["title"] == r["dtitle"] and r["source"] and r["hash"] for r in chunks)
    assert all(r["emb"] is not None and len(r["emb"]) == dim for r in chunks)
    n_chunks = q(store, "MATCH (c:Chunk) RETURN count(c) AS n")[0]["n"]
    assert n_chunks == len(chunks)
    mentions = q(store, "MATCH (c:Chunk)-[:MENTIONS]->(e:Entity) RETURN c.id AS c, collect(e.id) AS es")
    expected: Counter[tuple[str, str]] = Counter()
    for row in mentions:
        for a, b in combinations(sorted(set(row["es"])), 2):
            expected[(a, b)] += 1
    bounded = {(r["a"], r["b"]) for r in cooccur_rows([row["es"] for row in mentions], top_k, min_count)}
    actual = {(r["a"], r["b"]): r["n"] for r in q(
        store, "MATCH (a:Entity)-[x:CO_OCCURS]->(b:Entity) RETURN a.id AS a, b.id AS b, x.count AS n")}
    assert all(a < b for a, b in actual)
    assert actual == {k: expected[k] for k in bounded}
    assert all(expected[k] >= min_count for k in bounded)
    dup = q(store, "MATCH (a:Chunk)-[x:NEXT]->(b:Chunk) WITH a, b, count(x) AS n "
                   "WHERE n > 1 OR a.doc_id <> b.doc_id OR b.seq <> a.seq + 1 RETURN a.id AS a")
    assert dup == []
