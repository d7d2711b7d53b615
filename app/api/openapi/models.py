"""Success bodies of the built-in endpoints, for the OpenAPI document only (nothing is filtered by them).

``extra="allow"`` everywhere: a field added later is not a schema violation, a field removed or retyped
is (the schemathesis test checks real answers against these).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class Health(_Open):
    """GET /health; 503 with status ``degraded`` (and reason/hint) when the store is unreachable."""

    status: Literal["ok", "degraded"]
    api_version: str
    backend: str | None = None
    reason: str | None = None
    hint: str | None = None


class Diagnostics(_Open):
    """GET /diagnostics (features add sections of their own)."""

    api_version: str
    backend: str
    store: dict[str, Any]
    embedding: dict[str, Any]
    llm: dict[str, Any]
    schema_error: str | None
    indexes: list[dict[str, Any]]
    vector_index: dict[str, Any]
    counts: dict[str, Any]
    feature_flags: dict[str, Any]


class Source(_Open):
    """One ranked source of an answer (a stored chunk, or an external context item)."""

    id: str
    rank: int
    reason: str
    reasons: list[str]
    score: float | None
    composite_score: float | None
    text: str | None = None
    title: str | None = None
    doc_id: str | None = None


class QueryAnswer(_Open):
    """POST /query with ``stream: false``."""

    question: str
    answer: str
    mode: Literal["llm", "extractive"]
    sources: list[Source]
    references: list[dict[str, Any]]
    entities: list[dict[str, Any]]
    warnings: list[dict[str, Any]]
    cached: bool


class RankingItem(_Open):
    """One scored candidate of POST /ranking/preview."""

    id: str
    reason: str
    score_raw: float | None
    base_norm: float | None
    bonus: float | None
    composite_score: float | None
    final_score: float | None
    rel_type: str | None
    rel_conf: float | None
    features: dict[str, float] | None = Field(
        None, description="multihop: the reranker's inputs; the chosen pair also has `pair` and `coverage`")
    contributions: dict[str, float] | None = Field(
        None, description="multihop: each feature's share of the reranker's log-odds, and `bias`; they sum "
        "to logit(final_score)")
    pair_with: str | None = Field(
        None, description="multihop: the other item of the pair chosen as items 1 and 2")


class RankingPreview(_Open):
    """POST /ranking/preview."""

    question: str
    degraded: bool
    items: list[RankingItem]
    graph_mode: Literal["multihop", "bonus"] | None = Field(
        None, description="the graph stage that ranked: `multihop` or `bonus` (what "
        "`NEORAG_RETRIEVAL_GRAPH_MODE=auto` picked for this corpus); null with the graph stage off")


class Passage(_Open):
    """One CoRAG passage."""

    id: str
    contents: str
    title: str
    score: float


class Passages(_Open):
    """POST /retrieve with an object body (default shape)."""

    chunks: list[Passage]


class KGAnswer(_Open):
    """One answer of a KG-action batch, seed shape: results, or a per-item error."""

    query_time: float
    total_results: int
    results: list[dict[str, list[str] | str]] | None = None
    error: str | None = None


class KGChatAnswer(_Open):
    """One answer of a KG-action batch, ``?format=chat`` shape."""

    object: Literal["kg_retrieval"]
    success: bool
    choices: list[dict[str, Any]]
    kg_metadata: dict[str, Any]


class ActionInfo(_Open):
    name: str
    required: list[str]
    optional: list[str]
    result_key: str
    description: str


class Actions(_Open):
    """GET /actions."""

    actions: list[ActionInfo]
    datasets: list[dict[str, Any]]
    formats: list[str]
    max_batch: int


class ChatActions(_Open):
    """GET /actions?format=chat: the listing KG-R1's own server answers."""

    actions: list[str]
    supported_actions: list[str]
    supported_kgs: list[str]
    action_details: dict[str, Any]


class KGQueryAnswer(_Open):
    """POST /kg/query."""

    text: str
    calls: list[dict[str, Any]]


class CacheStats(_Open):
    """GET /cache/stats."""

    embedding_cache_size: int
    answer_cache_size: int
    embedding_cache_keys: list[str] = Field(
        description="The most recent 50 keys: `sha256:<16 hex>` digests of their text; the texts with "
                    "?texts=true (a write key)")
    answer_cache_keys: list[str]
    keys_shown_as: Literal["sha256", "text"]


class Cleared(_Open):
    """POST /cache/clear."""

    cleared: bool


class IngestCounts(_Open):
    """POST /ingest: the counts of a full ingest, or (relations-only mode) of the REL edges added."""

    elapsed_sec: float
    files_processed: int | None = None
    chunks_new: int | None = None
    errors: list[dict[str, Any]] | None = None
    mode: str | None = None
    upload_removed: bool | None = Field(None, description="True when the path was one uploaded file that did "
                                                          "not become a listed document and was deleted.")


class ReasonAnswer(_Open):
    """POST /reason/structgpt and /reason/corag."""

    answer: str
    steps: list[Any]
    llm_calls: int


class Evidences(_Open):
    """POST /evidence."""

    query: str
    evidences: list[dict[str, Any]]
    scores: list[float]
    linked_entities: list[Any]


class ChunkPreview(_Open):
    id: str
    title: str | None
    source: str | None
    preview: str


class ChunkPreviews(_Open):
    """GET /ui/api/chunks."""

    chunks: list[ChunkPreview]


class IngestRoots(_Open):
    """GET /ui/api/ingest/roots."""

    roots: list[dict[str, Any]]
    paths: list[str]


class KGSamples(_Open):
    """GET /ui/api/kg/samples."""

    dataset: str
    samples: list[dict[str, Any]]


class KGSample(_Open):
    """GET /ui/api/kg/sample."""

    dataset: str
    sample_id: str
    question: str | None = None


# OpenAPI before 3.2: the `schema` of text/event-stream describes ONE event, as a client parses it
SSE_EVENT: dict[str, Any] = {
    "type": "object", "required": ["data"],
    "properties": {
        "event": {"type": "string", "enum": ["start", "result", "message"],
                  "description": "`start`, `result`, or `message` (no `event:` line: a stage, done, error)"},
        "data": {"type": "string", "description": "A JSON object as text: `{}` (start), `{\"stage\": ...}`"},
        "id": {"type": "string"},
        "retry": {"type": "integer", "minimum": 0},
    },
}
SSE_DESCRIPTION = ("Server-sent events: `event: start`, stage lines (`data: {\"stage\": ...}`), "
                   "`event: result`, "
                   "then `data: {\"stage\": \"done\"}` (or `{\"stage\": \"error\", \"error\": ...}`).")
