"""A canonical, comparable dump of a document graph (nodes, edges, properties) for equality tests."""

from __future__ import annotations

import math
from typing import Any

from app.store.base import GraphStore
from tests.support.ingest_graph import q

# properties that legitimately differ between two equal graphs (clock) or are compared separately
VOLATILE = {"embedding", "ingested_at"}


def _clean(props: dict[str, Any]) -> tuple[tuple[str, Any], ...]:
    out = []
    for key, value in sorted(props.items()):
        if key in VOLATILE:
            continue
        if isinstance(value, float):
            value = round(value, 6)
        if isinstance(value, list):
            value = tuple(value)
        out.append((key, value))
    return tuple(out)


def canonical_dump(store: GraphStore) -> dict[str, Any]:
    """Every node (label, id, properties) and edge (type, ends, properties), sorted; embeddings aside."""
    nodes = sorted((tuple(r["labels"]), str(r["props"].get("id")), _clean(r["props"]))
                   for r in q(store, "MATCH (n) RETURN labels(n) AS labels, properties(n) AS props"))
    edges = sorted((r["t"], str(r["a"]), str(r["b"]), _clean(r["props"] or {})) for r in q(
        store, "MATCH (a)-[r]->(b) RETURN type(r) AS t, a.id AS a, b.id AS b, properties(r) AS props"))
    return {"nodes": nodes, "edges": edges}


def embeddings(store: GraphStore) -> dict[str, list[float]]:
    """Chunk id -> embedding."""
    return {r["id"]: list(r["e"]) for r in q(store, "MATCH (c:Chunk) RETURN c.id AS id, c.embedding AS e")}


def cosine(a: list[float], b: list[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    return dot / (math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b)))
