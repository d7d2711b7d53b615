"""Reference KG-R1 action server for the benchmark: per-sample Python dicts, FastAPI + uvicorn.

It mirrors the public KG-R1 retrieval server's design (pydantic request models, subgraphs loaded
from ``{base}/{dataset}/subgraphs/{sample_id}.json`` into memory at start-up, answers computed from
per-sample dicts) with the same answer shape NeoRAG gives, so both can be driven by one client.
Run: ``python bench/kg_reference_server.py --base DIR --port 8101``.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import uvicorn
from fastapi import FastAPI
from pydantic import BaseModel

Index = dict[str, Any]


class SearchRequest(BaseModel):
    action_type: str
    dataset_name: str | None = None
    sample_id: str | None = None
    entity_id: str | None = None
    relation: str | None = None
    concept: str | None = None


def build_index(triples: list[list[str]]) -> Index:
    """entity -> {'out': {rel: set(tails)}, 'in': {rel: set(heads)}} plus a folded-name map."""
    ents: dict[str, dict[str, dict[str, set[str]]]] = {}
    for h, r, t in triples:
        ents.setdefault(h, {"out": {}, "in": {}})["out"].setdefault(r, set()).add(t)
        ents.setdefault(t, {"out": {}, "in": {}})["in"].setdefault(r, set()).add(h)
    folded: dict[str, str] = {}
    for name in sorted(ents):
        folded.setdefault(name.strip().lower(), name)
    return {"ents": ents, "folded": folded}


def load_all(base: Path) -> dict[tuple[str, str], Index]:
    graphs: dict[tuple[str, str], Index] = {}
    for file in base.glob("*/subgraphs/*.json"):
        data = json.loads(file.read_text())
        triples = data["triples"] if isinstance(data, dict) else data
        if triples:
            graphs[(file.parent.parent.name, file.stem)] = build_index(triples)
    return graphs


REL = {"get_relations": "both", "get_head_relations": "in", "get_relations_in": "in",
       "get_tail_relations": "out", "get_relations_out": "out"}
ENT = {"get_head_entities": ("in", "head_entities"), "get_entities_in": ("in", "head_entities"),
       "get_tail_entities": ("out", "tail_entities"), "get_entities_out": ("out", "tail_entities")}


def answer(graphs: dict[tuple[str, str], Index], req: SearchRequest) -> dict[str, Any]:
    t0 = time.perf_counter()
    act = req.action_type
    needs_rel = act in ENT
    if not (req.sample_id and req.dataset_name and req.entity_id) or (needs_rel and not req.relation):
        return {"error": f"For {act.upper()}, required fields missing in request: {req.model_dump()}",
                "query_time": time.perf_counter() - t0, "total_results": 0}
    graph = graphs.get((req.dataset_name, req.sample_id))
    if graph is None:
        return {"results": [{"error": f"Subgraph for {req.sample_id} could not be loaded or is empty."}],
                "query_time": time.perf_counter() - t0, "total_results": 0}
    ents = graph["ents"]
    name = req.entity_id if req.entity_id in ents else graph["folded"].get(req.entity_id.strip().lower())
    node = graph["ents"].get(name) if name else None
    if act in REL:
        if node is None:
            values: list[str] = []
        elif REL[act] == "both":
            values = sorted(set(node["out"]) | set(node["in"]))
        else:
            values = sorted(node[REL[act]])
        key = "relations"
    elif act in ENT:
        direction, key = ENT[act]
        values = sorted(node[direction].get(req.relation, ())) if node else []
    else:
        return {"error": f"Unsupported action_type {act!r}", "query_time": time.perf_counter() - t0,
                "total_results": 0}
    return {"results": [{key: values}], "query_time": time.perf_counter() - t0, "total_results": len(values)}


def make_app(base: Path) -> FastAPI:
    graphs = load_all(base)
    app = FastAPI()

    @app.post("/retrieve")
    def retrieve(requests: list[SearchRequest]) -> list[dict[str, Any]]:
        return [answer(graphs, r) for r in requests]

    @app.get("/health")
    def health() -> dict[str, Any]:
        return {"status": "ok", "samples": len(graphs)}

    return app


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--base", type=Path, required=True)
    parser.add_argument("--port", type=int, default=8101)
    args = parser.parse_args()
    uvicorn.run(make_app(args.base), host="127.0.0.1", port=args.port, log_level="warning", access_log=False)
