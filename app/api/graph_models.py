"""OpenAPI response models of the graph and entity endpoints (issue 16). Extra fields are allowed:
nodes and edges carry the stored properties of what they show."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class GraphNode(BaseModel):
    model_config = ConfigDict(extra="allow")
    id: str = Field(
        description="Stable id: e:<entity>, c:<chunk>, d:<document>, s:<dataset>/<sample>, "
        "k:<dataset>/<sample>|<name>, q:<question hash>."
    )
    label: str = Field(description="Entity, Chunk, Document, KGSample, KGEntity or Question.")
    name: str


class GraphEdge(BaseModel):
    model_config = ConfigDict(extra="allow")
    id: str
    source: str
    target: str
    type: str = Field(
        description="MENTIONS, CO_OCCURS, HAS_CHUNK, NEXT, RELATES_TO, REL, KG_REL, TOPIC, "
        "FOCUS, ANSWER, ASKS_ABOUT, MATCHED."
    )


class GraphResponse(BaseModel):
    model_config = ConfigDict(extra="allow")
    nodes: list[GraphNode]
    edges: list[GraphEdge]
    truncated: bool = Field(description="True when a limit left nodes or edges out.")
    entry: dict[str, Any] = Field(default_factory=dict, description="What was drawn.")


class NodeDetails(BaseModel):
    model_config = ConfigDict(extra="allow")
    id: str
    label: str
    properties: dict[str, Any]
    chunks: list[dict[str, Any]]


class EntitySuggestions(BaseModel):
    entities: list[dict[str, Any]]


class DuplicateProposals(BaseModel):
    model_config = ConfigDict(extra="allow")
    pairs: list[dict[str, Any]] = Field(description="Candidate pairs, best first: {a, b, score, evidence}.")
    entities_compared: int
    min_score: float


class MergeResult(BaseModel):
    model_config = ConfigDict(extra="allow")
    target: dict[str, Any]
    merged: list[str] = Field(description="Keys merged by this request.")
    already_merged: list[str] = Field(description="Keys that were merged into the target before (no-op).")
