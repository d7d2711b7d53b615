"""Small graphs for the graph-view and entity tests: a text corpus with known entities, a hub entity,
and an independent recount of CO_OCCURS / RELATES_TO from the stored MENTIONS edges."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from app.services.container import Services
from app.store.base import GraphStore
from ingest.cooccur import cooccur_rows
from ingest.options import IngestOptions
from ingest.pipeline import ingest_path
from ingest.relations import relates_rows

LEAGUE_DOCS = {
    "league.md": "# League notes\n\nThe National Football League was founded in 1920 in Canton. "
    "Harald Hardrada led the army at York. The NFL has 32 teams and Canton hosts its hall.\n\n"
    "Each NFL season ends with the Super Bowl in February.",
    "saga.md": "# The saga\n\nHarald Hardrada's fleet reached York in 1066. The NFL schedule starts in "
    "September.\n\nHarald Hardrada died at Stamford Bridge near York.",
    "other.md": "# Unrelated\n\nThe Super Bowl is watched in Canton and in York every February.",
}


def write_docs(folder: Path, docs: dict[str, str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in docs.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def ingest_docs(services: Services, folder: Path, docs: dict[str, str] | None = None) -> Path:
    """Write ``docs`` (default: the league corpus) into ``folder`` and ingest it (no LLM, no checkpoint)."""
    write_docs(folder, docs or LEAGUE_DOCS)
    ingest_path(services, folder, IngestOptions(llm_relations=False, checkpoint=False))
    return folder


def mentions(store: GraphStore) -> list[dict[str, Any]]:
    """Every (chunk, entity, count) MENTIONS edge."""
    rows = store.run("retrieval_chunk_index")
    ids = [r["id"] for r in rows]
    out = []
    for row in store.run("graph_chunk_entities", {"ids": ids, "limit": 10_000}):
        for e in row["entities"]:
            out.append({"chunk": row["chunk"], "entity": e["id"], "count": e["count"]})
    return out


def expected_cooccurs(store: GraphStore, top_k: int = 5, min_count: int = 2) -> dict[tuple[str, str], int]:
    """CO_OCCURS counts recomputed from MENTIONS with the bounded rule (ingest/cooccur.py; defaults as the
    settings): the oracle for what the store must hold after any write."""
    per_chunk: dict[str, set[str]] = {}
    for m in mentions(store):
        per_chunk.setdefault(m["chunk"], set()).add(m["entity"])
    rows = cooccur_rows([sorted(ents) for ents in per_chunk.values()], top_k, min_count)
    return {(str(r["a"]), str(r["b"])): int(r["count"]) for r in rows}  # type: ignore[call-overload]


def stored_cooccurs(store: GraphStore) -> dict[tuple[str, str], int]:
    ids = sorted({m["entity"] for m in mentions(store)})
    rows = store.run("graph_entity_links", {"ids": ids, "limit": 100_000})
    return {(r["source"], t["id"]): int(t["count"]) for r in rows for t in r["targets"]}


def expected_relates(store: GraphStore, sources: list[str], window: int) -> set[tuple[str, str, int]]:
    """RELATES_TO (a, b, shared) recomputed from MENTIONS for the given sources."""
    per_chunk: dict[str, list[str]] = {}
    for m in mentions(store):
        per_chunk.setdefault(m["chunk"], []).append(m["entity"])
    out = set()
    for source in sources:
        ids = [r["id"] for r in store.run("ingest_source_chunks_ordered", {"source": source})]
        out |= {(r["a"], r["b"], r["shared"]) for r in relates_rows(ids, per_chunk, window)}
    return out


def stored_relates(store: GraphStore) -> set[tuple[str, str, int]]:
    ids = [r["id"] for r in store.run("retrieval_chunk_index")]
    rows = store.run("graph_chunk_links", {"ids": ids, "limit": 100_000})
    return {
        (r["source"], t["id"], int(t["shared"]))
        for r in rows
        for t in r["targets"]
        if t["type"] == "RELATES_TO"
    }


HUB = "ahub"


def build_hub(store: GraphStore, chunks: int, per_chunk: int) -> int:
    """A hub entity mentioned by ``chunks`` chunks, each also naming ``per_chunk`` entities of its own:
    the hub gets ``chunks x per_chunk`` CO_OCCURS neighbours (the real ingest statements)."""
    store.bootstrap(384)  # indexes before writes
    store.run(
        "document_upsert", {"rows": [{"id": "doc-hub", "title": "Hub", "source": "/hub.md", "props": {}}]}
    )
    store.run_batched(
        "chunk_upsert",
        [
            {
                "id": f"doc-hub:{i}:h",
                "doc_id": "doc-hub",
                "text": f"chunk {i} about the hub",
                "hash": str(i),
                "source": "/hub.md",
                "seq": i,
                "title": "Hub",
                "pos": i,
            }
            for i in range(chunks)
        ],
    )
    ents = [{"id": HUB, "name": "AHub", "aliases": ["AHub"]}]
    ents += [
        {"id": f"e{i}x{j}", "name": f"E{i}x{j}", "aliases": [f"E{i}x{j}"]}
        for i in range(chunks)
        for j in range(per_chunk)
    ]
    store.run_batched("ingest_entity_upsert", ents)
    rows = [{"chunk": f"doc-hub:{i}:h", "entity": HUB, "count": 1} for i in range(chunks)]
    rows += [
        {"chunk": f"doc-hub:{i}:h", "entity": f"e{i}x{j}", "count": 1}
        for i in range(chunks)
        for j in range(per_chunk)
    ]
    store.run_batched("ingest_mentions_set", rows)
    store.run("ingest_entity_freq", {"rows": [{"id": HUB}]})
    # every other entity picks the hub as a partner (bounded per entity, not per hub): a hub of many edges
    links = [{"a": HUB, "b": r["entity"], "count": 1, "pmi": 1.0} for r in rows if r["entity"] != HUB]
    return store.run_batched("ingest_cooccur_set", links)
