"""GET /graph in one function: validate the entry point, build the bounded graph, 404 for unknowns.

Entry points (one per request; with several, the first of ENTRY_POINTS wins and ``entry.ignored`` names
the others): ``entity`` (a name, surface form or key), ``document`` (a
Document id), ``dataset`` + ``sample`` (a loaded KG sample; ``focus`` picks the entity to start from),
``node`` (a node id from an earlier graph: its one-hop neighbourhood, how the page expands a click)
and ``answer`` (the id of a streamed answer's evidence graph).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from app.core.config import Settings
from app.core.errors import BadInput
from app.entities.lookup import clean_name, resolve
from app.graphview import evidence
from app.graphview.kg_graph import kg_entity_graph, sample_graph
from app.graphview.model import (
    CHUNK,
    DOCUMENT,
    ENTITY,
    KG_ENTITY,
    KG_SAMPLE,
    GraphBuilder,
    split_id,
    split_kg_entity_key,
)
from app.graphview.text_graph import chunk_graph, document_graph, entity_graph
from app.services.container import Services
from app.store.base import GraphStore

ENTRY_POINTS = "entity, document, dataset + sample, node, answer"
MAX_TEXT = 500


@dataclass
class GraphQuery:
    """The raw query parameters of GET /graph (strings as given, None when absent)."""

    entity: str | None = None
    document: str | None = None
    dataset: str | None = None
    sample: str | None = None
    focus: str | None = None
    node: str | None = None
    answer: str | None = None
    depth: int | None = None
    limit: int | None = None


def _text(value: str | None, field: str) -> str:
    text = (value or "").strip()
    if not text:
        raise BadInput(f"{field}: must not be empty", field=field)
    if len(text) > MAX_TEXT:
        raise BadInput(f"{field}: at most {MAX_TEXT} characters", field=field)
    return text


def _entry(q: GraphQuery) -> tuple[str, list[str]]:
    """The entry point drawn and the parameters ignored: with several, the first of ENTRY_POINTS given wins
    (a documented precedence: every combination of the optional parameters is valid); 422 for none, and
    for half a sample when nothing else is given."""
    given = [name for name, value in (("entity", q.entity), ("document", q.document),
                                      ("sample", q.sample if q.dataset is not None else None),
                                      ("node", q.node), ("answer", q.answer)) if value is not None]
    if not given:
        if (q.dataset is None) != (q.sample is None):
            missing = "sample" if q.sample is None else "dataset"
            raise BadInput(f"{missing}: a KG sample needs both dataset and sample", field=missing)
        raise BadInput(f"query: give an entry point ({ENTRY_POINTS}); got none", field="query")
    chosen = given[0]
    present = {"entity": q.entity, "document": q.document, "dataset": q.dataset, "sample": q.sample,
               "focus": q.focus, "node": q.node, "answer": q.answer}
    used = {"sample": {"dataset", "sample", "focus"}}.get(chosen, {chosen})
    ignored = [name for name, value in present.items() if value is not None and name not in used]
    return chosen, ignored


def limits(settings: Settings, depth: int | None, limit: int | None) -> tuple[int, int]:
    """(depth, limit) with defaults; 422 naming the field when out of range."""
    d = 1 if depth is None else depth
    if d not in (1, 2):
        raise BadInput("depth: must be 1 or 2", field="depth")
    n = settings.graph_default_limit if limit is None else limit
    if not 1 <= n <= settings.graph_max_limit:
        raise BadInput(
            f"limit: between 1 and {settings.graph_max_limit} (NEORAG_GRAPH_MAX_LIMIT)", field="limit"
        )
    return d, min(n, settings.graph_max_limit)


def _not_found(field: str, message: str) -> BadInput:
    return BadInput(f"{field}: {message}", status=404, field=field)


def get_graph(services: Services, q: GraphQuery) -> dict[str, Any]:
    """The graph payload for one entry point, plus ``entry`` saying what was drawn."""
    entry, ignored = _entry(q)
    body = _draw(services, q, entry)
    if ignored:
        body["entry"]["ignored"] = ignored
    return body


def _draw(services: Services, q: GraphQuery, entry: str) -> dict[str, Any]:
    """The graph of the chosen entry point, with ``entry`` saying what was drawn."""
    depth, limit = limits(services.settings, q.depth, q.limit)
    store = services.store
    per = services.settings.graph_chunks_per_entity
    if entry == "entity":
        name = clean_name(q.entity, "entity")
        found = resolve(store, name)
        if found is None:
            raise _not_found("entity", f"no entity named {name!r} (GET /entities/search?q=... lists names)")
        body = entity_graph(store, found, depth, limit, per).as_dict()
        return {**body, "entry": {"entity": name, "id": found["id"], "merged_from": found.get("merged_from")}}
    if entry == "document":
        doc_id = _text(q.document, "document")
        return {**document(store, doc_id, limit, per), "entry": {"document": doc_id}}
    if entry == "sample":
        dataset, sample = _text(q.dataset, "dataset"), _text(q.sample, "sample")
        focus = _text(q.focus, "focus") if q.focus is not None else None
        g = sample_graph(store, dataset, sample, depth, limit, focus)
        if g is None:
            raise _not_found("sample", f"no sample {sample!r} in KG dataset {dataset!r} (neorag kg load ...)")
        return {**g.as_dict(), "entry": {"dataset": dataset, "sample": sample, "focus": focus}}
    if entry == "node":
        nid = _text(q.node, "node")
        return {**expand(services, nid, limit), "entry": {"node": nid}}
    key = _text(q.answer, "answer")
    snap = evidence.recall(services, key)
    if snap is None:
        raise _not_found(
            "answer",
            f"no evidence graph {key!r} (kept for NEORAG_CACHE_TTL_S after a POST /query with include_graph)",
        )
    return {**evidence.evidence_graph(store, snap, limit), "entry": {"answer": key}}


def document(store: GraphStore, doc_id: str, limit: int, per_chunk: int) -> dict[str, Any]:
    """A document's graph; 404 when no Document has that id."""
    rows = store.run("graph_document", {"id": doc_id, "limit": limit})
    if not rows:
        raise _not_found("document", f"no document {doc_id!r} (Document.id, e.g. from a source's doc_id)")
    return document_graph(store, rows[0], limit, per_chunk).as_dict()


def expand(services: Services, nid: str, limit: int) -> dict[str, Any]:
    """The one-hop neighbourhood of a node id from an earlier graph; 404 when it no longer exists."""
    store = services.store
    per = services.settings.graph_chunks_per_entity
    kind, key = split_id(nid)
    g: GraphBuilder | None = None
    if kind == ENTITY:
        found = resolve(store, key)
        g = entity_graph(store, found, 1, limit, per) if found is not None else None
    elif kind == CHUNK:
        g = chunk_graph(store, key, limit, per)
    elif kind == DOCUMENT:
        return document(store, key, limit, per)
    elif kind == KG_SAMPLE:
        dataset, _, sample = key.partition("/")
        g = sample_graph(store, dataset, sample, 1, limit) if dataset and sample else None
    elif kind == KG_ENTITY:
        parts = split_kg_entity_key(key)
        g = kg_entity_graph(store, *parts, limit) if parts else None
    else:
        raise BadInput(f"node: {nid!r} is not an expandable node id (e:, c:, d:, s:, k:)", field="node")
    if g is None:
        raise _not_found("node", f"{nid!r} is not in the graph (any more)")
    return g.as_dict()
