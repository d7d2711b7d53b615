"""Neo4j's vector search and chunk-detail statements alone, variant by variant (issue 23, item 6).

Builds a graph of N chunks as bench/query.py does (HotpotQA train100 copied; the base from
``--base-cache``, written by bench/query.py), embeds the HotpotQA train100 questions, then times each
variant of ``chunk_vector_search`` (the library's, the index score only, ids only, ids only for k=10,
exact re-scoring only where the index says cos <= 0) and of ``retrieval_chunk_details`` (walking every
relationship vs degree counts), 200 queries each (p50 of the last 180). Prints the details statement's plan.

    .venv/bin/python bench/neo4j_vector_search.py neo4j 20000 [/tmp/bench_base26.json]
    .venv/bin/python bench/neo4j_vector_search.py embedded 20000   # the library's statement only
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from bench.backends import bench_store  # noqa: E402
from bench.query import bench_library, build_scaled, make_services  # noqa: E402

QUESTIONS = Path("/work/shared/data/hotpotqa-train100/hotpotqa_train.json")
K = 40  # what /ranking/preview asks for at its defaults (top_k 10 x oversample 4)
SEARCH = "CALL db.index.vector.queryNodes('chunk_embedding', {n}, $embedding) YIELD node, score\n"
FIELDS = "RETURN node.id AS id, node.text AS text, node.source AS source, node.seq AS seq, score\n"
VARIANTS: dict[str, str | None] = {
    "library statement": None,
    "index score, no re-scoring": SEARCH.format(n="2 * $k") + FIELDS + "ORDER BY score DESC, id LIMIT $k",
    "ids only, 2k neighbours": SEARCH.format(n="2 * $k") + "RETURN node.id AS id, score",
    "ids only, 10 neighbours": SEARCH.format(n="10") + "RETURN node.id AS id, score",
    "re-scoring only where cos <= 0": SEARCH.format(n="2 * $k")
    + "WITH node, CASE WHEN score > 0.5 THEN score "
    "ELSE vector.similarity.cosine(node.embedding, $embedding) END AS score\n"
    + FIELDS + "ORDER BY score DESC, id LIMIT $k",
}
OLD_DETAILS = """UNWIND $ids AS cid
MATCH (c:Chunk {id: cid})
OPTIONAL MATCH (c)-[r]-()
WITH c, count(CASE WHEN type(r) <> 'HAS_CHUNK' THEN 1 END) AS degree
RETURN c.id AS id, c.title AS title, c.doc_id AS doc_id, c.source AS source, c.seq AS seq,
       CASE WHEN c.embedding IS NULL THEN null
            ELSE vector.similarity.cosine(c.embedding, $embedding) END AS score,
       degree"""


def p50(calls: list[Any]) -> float:
    """p50 ms of the calls, each made twice, the first 20 left out (warm-up)."""
    lat = []
    for call in calls * 2:
        t = time.perf_counter()
        call()
        lat.append((time.perf_counter() - t) * 1000)
    return statistics.median(lat[20:])


def operators(plan: dict[str, Any]) -> list[str]:
    """The operator names of a profiled plan, depth first."""
    return [plan["operatorType"]] + [op for c in plan.get("children", []) for op in operators(c)]


def main() -> None:
    backend, size = sys.argv[1], int(sys.argv[2])
    base = json.loads(Path(sys.argv[3] if len(sys.argv) > 3 else "/tmp/bench_base26.json").read_text())
    tmp = Path(tempfile.mkdtemp(prefix="vec"))
    with bench_store(backend, tmp / "store", cypher_dir=bench_library(tmp)) as bs:
        services = make_services(bs.settings.model_copy(update={"graph_name": "bench_v"}))
        print("built", build_scaled(services, base, size), "chunks", flush=True)
        questions = [q["question"] for q in json.loads(QUESTIONS.read_text())]
        embeddings = [list(map(float, e)) for e in services.embedder.embed(questions)]
        store = services.store
        for name, text in VARIANTS.items():
            if text is None:
                calls = [lambda e=e: store.run("chunk_vector_search", {"embedding": e, "k": K})
                         for e in embeddings]
            elif backend == "neo4j":
                calls = [lambda e=e, t=text: store._auto_commit(t, {"embedding": e, "k": K})
                         for e in embeddings]
            else:
                continue
            print(f"vector search, {name}: p50 {p50(calls):.2f} ms", flush=True)
        if backend == "neo4j":
            params = [{"ids": [r["id"] for r in store.run("chunk_vector_search", {"embedding": e, "k": K})],
                       "embedding": e} for e in embeddings]
            old = p50([lambda p=p: store._auto_commit(OLD_DETAILS, p) for p in params])
            new = p50([lambda p=p: store.run("retrieval_chunk_details", p) for p in params])
            print(f"details: walking relationships {old:.2f} ms, degree counts {new:.2f} ms")
            text = store.library.get("retrieval_chunk_details").text
            with store._driver.session() as session:
                plan = session.run("PROFILE " + text, params[0]).consume().profile
                print("details plan:", operators(plan))
        store.run("graph_clear")


if __name__ == "__main__":
    main()
