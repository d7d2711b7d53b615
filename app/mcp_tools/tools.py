"""The MCP tools: plain functions over the services (the SDK runs sync tools in a worker thread).

Every NeoRAG error (bad input, unknown entity, store down, path outside the ingest roots) becomes a
``ToolError`` carrying its one-line message, so the agent sees e.g. ``question: must not be empty``
as a tool error result, never a crash.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from typing import Annotated, Any

from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from app.core.errors import NeoRAGError
from app.graphview.service import GraphQuery, get_graph
from app.kg.runtime import kg_cache
from app.kg.service import run_actions
from app.retrieval import validate
from app.retrieval.passages import retrieve_passages
from app.retrieval.qa import QueryRequest, run_query
from app.services.container import Services

ServicesGetter = Callable[[], Services]
TopK = Annotated[int, Field(ge=1, le=100, description="How many sources / passages (1-100).")]
Text = Annotated[str, Field(min_length=1, max_length=2000)]
Name = Annotated[str, Field(min_length=1, max_length=500)]


@contextmanager
def tool_errors() -> Iterator[None]:
    """NeoRAG errors as tool errors with their actionable message."""
    try:
        yield
    except NeoRAGError as exc:
        raise ToolError(str(exc)) from exc


def _kg(services: Services, action: str, dataset: str, sample_id: str, entity: str,
        relation: str | None = None) -> dict[str, Any]:
    item = {"action_type": action, "dataset_name": dataset, "sample_id": sample_id, "entity_id": entity}
    if relation is not None:
        item["relation"] = relation
    cache = kg_cache(services.extras, services.settings.kg_cache_max_triples)
    answer: dict[str, Any] = run_actions(services.store, cache, [item])[0]
    if "error" in answer:
        raise ToolError(str(answer["error"]))
    first = (answer.get("results") or [{}])[0]
    if "error" in first:
        raise ToolError(str(first["error"]))
    return {"action": action, "dataset": dataset, "sample_id": sample_id, "entity": entity,
            "relation": relation, **first, "total_results": answer.get("total_results")}


def make_tools(get: ServicesGetter) -> list[Callable[..., Any]]:
    """The tool functions, bound to the process's services."""

    def query(question: Text, top_k: TopK | None = None) -> dict[str, Any]:
        """Answer a question from the ingested documents with cited sources ([S1], [S2], ...).

        Hybrid retrieval (vector, BM25, entities, graph paths) then an LLM answer when one is configured,
        else an extractive answer. Returns the answer, its mode and the numbered sources with their text.
        """
        services = get()
        with tool_errors():
            s = services.settings
            req = QueryRequest(question=validate.question(s, question),
                               top_k=validate.top_k(s, top_k, s.retrieval_top_k))
            body = run_query(services, req)
        sources = [{"label": f"S{src['rank']}", "id": src["id"], "title": src.get("title"),
                    "score": src.get("score"), "reason": src.get("reason"), "text": src.get("text")}
                   for src in body["sources"]]
        return {"question": body["question"], "answer": body["answer"], "mode": body["mode"],
                "sources": sources, "warnings": body["warnings"]}

    def retrieve_passages_tool(query: Text, top_k: TopK = 10) -> dict[str, Any]:
        """Retrieve the passages (chunks) most relevant to a query, best first, without answering."""
        services = get()
        with tool_errors():
            return {"query": query, "passages": retrieve_passages(services, validate.question(
                services.settings, query, "query"), top_k)}

    def get_relations(dataset: Name, sample_id: Name, entity: Name) -> dict[str, Any]:
        """KG action (KG-R1): the relations touching an entity inside one loaded KG sample."""
        with tool_errors():
            return _kg(get(), "get_relations", dataset, sample_id, entity)

    def get_head_entities(dataset: Name, sample_id: Name, entity: Name, relation: Name) -> dict[str, Any]:
        """KG action (KG-R1): heads h with (h, relation, entity) inside one loaded KG sample."""
        with tool_errors():
            return _kg(get(), "get_head_entities", dataset, sample_id, entity, relation)

    def get_tail_entities(dataset: Name, sample_id: Name, entity: Name, relation: Name) -> dict[str, Any]:
        """KG action (KG-R1): tails t with (entity, relation, t) inside one loaded KG sample."""
        with tool_errors():
            return _kg(get(), "get_tail_entities", dataset, sample_id, entity, relation)

    def graph_neighbourhood(
        entity: Name,
        depth: Annotated[int, Field(ge=1, le=2)] = 1,
        limit: Annotated[int, Field(ge=1, le=500)] = 50,
    ) -> dict[str, Any]:
        """The neighbourhood of a document entity in the graph: its chunks and co-occurring entities
        (nodes with stable ids, edges, and whether limits truncated it)."""
        with tool_errors():
            return get_graph(get(), GraphQuery(entity=entity, depth=depth, limit=limit))

    def ingest(path: Annotated[str, Field(min_length=1, max_length=4096)],
               incremental: bool = True) -> dict[str, Any]:
        """Ingest a file or folder on the server (inside NEORAG_INGEST_ROOTS) into the graph; returns
        the counts. Incremental by default: unchanged chunks are skipped."""
        from app.documents.upload_ingest import drop_unlisted_upload
        from app.documents.uploads import ingest_roots
        from ingest.jobs import ingest_jobs
        from ingest.options import IngestOptions
        from ingest.paths import checked_target

        services = get()
        with tool_errors():
            options = IngestOptions(incremental=incremental, checkpoint=True)
            target = checked_target(path, ingest_roots(services.settings), options)
            return ingest_jobs(services).run_sync(services, target, options,
                                                  after=partial(drop_unlisted_upload, services, target))

    retrieve_passages_tool.__name__ = "retrieve_passages"
    return [query, retrieve_passages_tool, get_relations, get_head_entities, get_tail_entities,
            graph_neighbourhood, ingest]
