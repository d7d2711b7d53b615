# ruff: noqa: E501
"""Latency of POST /ranking/preview and CoRAG POST /retrieve at 2k and 20k chunks (embedded FalkorDB or Neo4j).

Run: .venv/bin/python bench/query.py [--sizes 2000 20000] [--requests 100] [--concurrency 1 4] [--base-cache F]
     [--backend embedded|neo4j]

The HotpotQA train100 corpus (shared/data) is ingested once through the real pipeline (no LLM); larger
graphs are that graph copied k times (chunks, documents, entities, MENTIONS, CO_OCCURS, RELATES_TO, NEXT;
chunk/document ids suffixed per copy, one Entity per key shared by all copies (freq x copies, as
Entity.id = norm requires); embeddings jittered
so copies are not identical). `neorag serve` runs in its own process; a thread pool of HTTP clients
sends questions never seen before (HotpotQA + MuSiQue, so query embeddings are computed). Reports p50/p95 per endpoint and size, and the 2k -> 20k growth.
``/ranking/preview`` then gets the same questions once more: the server has their embeddings cached, so that
pass is retrieval without the question's embedding (rows with ``"embedding": "cached"``).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402
import numpy as np  # noqa: E402

from app.core.config import Settings  # noqa: E402
from app.services.container import Services  # noqa: E402
from app.services.embedder_choice import shared_embedder  # noqa: E402
from app.store.factory import make_store  # noqa: E402
from bench.backends import BACKENDS, bench_store  # noqa: E402
from bench.variants import VARIANT_HELP, parse_variants  # noqa: E402

DATA = Path("/work/shared/data/hotpotqa-train100")

# Bench-only statements (written to a temporary copy of cypher/, never to the repo's library).
BENCH_STATEMENTS = {
    "bench_export_chunks": "// Bench: chunks. Params: none.\nMATCH (c:Chunk) RETURN c.id AS id, c.doc_id AS doc_id, "
    "c.text AS text, c.title AS title, c.source AS source, c.seq AS seq, c.hash AS hash",
    "bench_export_docs": "// Bench: documents. Params: none.\nMATCH (d:Document) RETURN d.id AS id, d.title AS title, "
    "d.source AS source",
    "bench_export_entities": "// Bench: entities. Params: none.\nMATCH (e:Entity) RETURN e.id AS id, e.name AS name, "
    "e.norm AS norm, e.freq AS freq, e.aliases AS aliases",
    "bench_export_mentions": "// Bench: mentions. Params: none.\nMATCH (c:Chunk)-[m:MENTIONS]->(e:Entity) "
    "RETURN c.id AS a, e.id AS b, m.count AS count",
    "bench_export_cooccurs": "// Bench: co-occurrences. Params: none.\nMATCH (a:Entity)-[r:CO_OCCURS]->(b:Entity) "
    "RETURN a.id AS a, b.id AS b, r.count AS count",
    "bench_export_relates": "// Bench: relates. Params: none.\nMATCH (a:Chunk)-[r:RELATES_TO]->(b:Chunk) "
    "RETURN a.id AS a, b.id AS b, r.weight AS weight, r.shared AS shared",
    "bench_export_next": "// Bench: next links. Params: none.\nMATCH (a:Chunk)-[:NEXT]->(b:Chunk) RETURN a.id AS a, b.id AS b",
    "bench_write_docs": "// Bench: documents. Params: $rows.\nUNWIND $rows AS r CREATE (:Document {id: r.id, title: r.title, "
    "source: r.source})",
    "bench_write_chunks": "// Bench: chunks with vectors. Params: $rows.\nUNWIND $rows AS r MATCH (d:Document {id: r.doc_id}) "
    "CREATE (d)-[:HAS_CHUNK]->(:Chunk {id: r.id, doc_id: r.doc_id, text: r.text, title: r.title, source: r.source, "
    "seq: r.seq, hash: r.hash, embedding: vecf32(r.embedding)})",
    "bench_write_entities": "// Bench: entities. Params: $rows.\nUNWIND $rows AS r CREATE (:Entity {id: r.id, name: r.name, "
    "norm: r.norm, freq: r.freq, aliases: r.aliases})",
    "bench_write_mentions": "// Bench: mentions. Params: $rows.\nUNWIND $rows AS r MATCH (c:Chunk {id: r.a}) "
    "MATCH (e:Entity {id: r.b}) CREATE (c)-[:MENTIONS {count: r.count}]->(e)",
    "bench_write_cooccurs": "// Bench: co-occurrences. Params: $rows.\nUNWIND $rows AS r MATCH (a:Entity {id: r.a}) "
    "MATCH (b:Entity {id: r.b}) CREATE (a)-[:CO_OCCURS {count: r.count}]->(b)",
    "bench_write_relates": "// Bench: relates. Params: $rows.\nUNWIND $rows AS r MATCH (a:Chunk {id: r.a}) "
    "MATCH (b:Chunk {id: r.b}) CREATE (a)-[:RELATES_TO {weight: r.weight, shared: r.shared}]->(b)",
    "bench_write_next": "// Bench: next links. Params: $rows.\nUNWIND $rows AS r MATCH (a:Chunk {id: r.a}) "
    "MATCH (b:Chunk {id: r.b}) CREATE (a)-[:NEXT]->(b)",
}


# Neo4j: the same chunks, their vector stored as float32 like chunk_set_embeddings does.
NEO4J_CHUNKS = ("// Bench: chunks with vectors. Params: $rows.\nUNWIND $rows AS r MATCH (d:Document {id: r.doc_id}) "
                "CREATE (d)-[:HAS_CHUNK]->(c:Chunk {id: r.id, doc_id: r.doc_id, text: r.text, title: r.title, "
                "source: r.source, seq: r.seq, hash: r.hash}) "
                "WITH c, r CALL db.create.setNodeVectorProperty(c, 'embedding', r.embedding)")


def bench_library(tmp: Path) -> Path:
    """A copy of cypher/ plus the bench statements (both dialects)."""
    lib = tmp / "cypher"
    shutil.copytree(ROOT / "cypher", lib)
    for name, text in BENCH_STATEMENTS.items():
        (lib / "falkordb" / f"{name}.cypher").write_text(text + "\n")
        neo = NEO4J_CHUNKS if name == "bench_write_chunks" else text
        (lib / "neo4j" / f"{name}.cypher").write_text(neo + "\n")
    return lib


def make_services(settings: Settings) -> Services:
    """Services with the configured embedder (NEORAG_EMBEDDING_MODEL: the server's), so the stored
    vectors and the questions' come from one model."""
    embedder = shared_embedder(settings.embedding_model, settings.embedding_device,
                               settings.embedding_batch_size, settings.models_dir)
    return Services(settings, make_store(settings), embedder, None)


def ingest_base(settings: Settings) -> Services:
    from ingest.options import IngestOptions
    from ingest.pipeline import ingest_path

    services = make_services(settings)
    services.store.run("graph_clear")
    services.store.bootstrap(services.embedder.dimension)
    t = time.perf_counter()
    res = ingest_path(
        services, DATA / "hotpotqa_train_corpus.json", IngestOptions(llm_relations=False, checkpoint=False)
    )
    print(f"base ingest: {res.chunks_total} chunks in {time.perf_counter() - t:.1f} s", flush=True)
    return services


def export(base: Services) -> dict[str, list[dict[str, Any]]]:
    out = {
        k: base.store.run(f"bench_export_{k}")
        for k in ("chunks", "docs", "entities", "mentions", "cooccurs", "relates", "next")
    }
    vecs = base.embedder.embed([c["text"] for c in out["chunks"]])  # same texts as ingest: cache hits
    for c, v in zip(out["chunks"], vecs, strict=True):
        c["embedding"] = v
    return out


def build_scaled(services: Services, base: dict[str, list[dict[str, Any]]], target: int) -> int:
    """Write ceil(target / base chunks) copies of the base graph; returns the chunk count."""
    store = services.store
    store.run("graph_clear")
    store.bootstrap(services.embedder.dimension)
    copies = math.ceil(target / len(base["chunks"]))
    rng = np.random.default_rng(0)
    written = 0
    for n in range(copies):
        sfx = f"#{n}"
        store.run_batched("bench_write_docs", [{**d, "id": d["id"] + sfx} for d in base["docs"]], 2000)
        chunks = base["chunks"][: max(0, min(len(base["chunks"]), target - written))]
        rows = []
        for c in chunks:
            v = np.asarray(c["embedding"], dtype=np.float32) + rng.normal(0, 0.01, len(c["embedding"]))
            rows.append(
                {
                    **c,
                    "id": c["id"] + sfx,
                    "doc_id": c["doc_id"] + sfx,
                    "embedding": (v / np.linalg.norm(v)).astype(float).tolist(),
                }
            )
        store.run_batched("bench_write_chunks", rows, 1000)
        written += len(rows)
        keep = {c["id"] for c in chunks}
        if n == 0:  # one Entity per normalised key (schema: Entity.id = norm), shared by every copy
            store.run_batched(
                "bench_write_entities",
                [{**e, "freq": int(e.get("freq") or 1) * copies} for e in base["entities"]],
                2000,
            )
            store.run_batched("bench_write_cooccurs", base["cooccurs"], 5000)
        for kind in ("mentions", "relates", "next"):
            rows = [
                {**r, "a": r["a"] + sfx, "b": r["b"] if kind == "mentions" else r["b"] + sfx}
                for r in base[kind]
                if r["a"] in keep and (kind == "mentions" or r["b"] in keep)
            ]
            store.run_batched(f"bench_write_{kind}", rows, 2000)
        if written >= target:
            break
    return written


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def spawn(env: dict[str, str], port: int | None = None,
          wait_s: float = 60.0) -> tuple[subprocess.Popen[bytes], str]:
    """``neorag serve`` with ``env`` in its own process, returned once /health answers (or wait_s passed;
    exits if the server dies first)."""
    port = port or free_port()
    proc = subprocess.Popen([sys.executable, "-m", "app.cli", "serve", "--port", str(port)], env=env,
                            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    for _ in range(int(wait_s * 10)):
        try:
            if httpx.get(url + "/health", timeout=2).status_code == 200:
                break
        except httpx.HTTPError:
            pass
        if proc.poll() is not None:
            sys.exit(f"neorag serve exited with {proc.returncode} before answering /health")
        time.sleep(0.1)
    return proc, url


def serve(settings: Settings, store_env: dict[str, str],
          extra: dict[str, str] | None = None) -> tuple[subprocess.Popen[bytes], str]:
    """``neorag serve`` in its own process (no GIL shared with the client), on the bench graph."""
    port = free_port()
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("NEORAG_")},
        **store_env,
        **(extra or {}),
        "NEORAG_GRAPH_NAME": settings.graph_name,
        "NEORAG_CYPHER_DIR": str(settings.cypher_dir),
        "NEORAG_LLM_BASE_URL": "",
    }
    env.pop("NEORAG_LLM_BASE_URL")
    proc, url = spawn(env, port)
    # steady state of a running server: the store's indexes are online (a variant with the store's vector
    # index may have had it created at start), the in-process indexes are built and torch has seen every
    # input length once (on CPU each new sequence length costs ~30 ms the first time)
    with httpx.Client(timeout=60) as c:
        for _ in range(3000):
            states = {str(i.get("state")).upper() for i in c.get(url + "/diagnostics").json().get("indexes", [])}
            if not states & {"POPULATING", "UNDER CONSTRUCTION", "PENDING"}:
                break
            time.sleep(0.2)
        for n in range(1, 97):
            c.post(url + "/ranking/preview", json={"question": " ".join(["word"] * n)})
        # the query worker chooses its fast encoder in the background (NEORAG_EMBEDDING_QUERY_PRECISION):
        # measure the steady state, after the choice, with every input length seen once more
        encoder: dict[str, Any] = {}
        for _ in range(600):
            stats = c.get(url + "/diagnostics").json().get("retrieval", {}).get("query_embedder") or {}
            encoder = stats.get("encoder") or {}
            if encoder.get("ready", True):
                break
            time.sleep(0.1)
        print(f"query encoder: {encoder.get('precision')} traced={encoder.get('traced')} "
              f"({encoder.get('choice') or encoder.get('fallback_reason')})", flush=True)
        for n in range(1, 97):
            c.post(url + "/ranking/preview", json={"question": " ".join(["word"] * n)})
    return proc, url


def pct(values: list[float], p: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(round(p / 100 * (len(s) - 1))))]


def load(url: str, path: str, bodies: list[dict[str, Any]], concurrency: int) -> dict[str, float]:
    """p50/p95 of the round trip, req/s, errors; for /ranking/preview also the server's own split
    (``timings_ms``): ``embed_ms`` = waiting for the question's embedding (what BM25 and entity linking
    did not hide), ``retrieval_ms`` = the server's total minus that wait (retrieval proper), and the p50
    of every stage the server times."""
    lat: list[float] = []
    embed: list[float] = []
    proper: list[float] = []
    stages: dict[str, list[float]] = {}
    errors = 0

    def one(body: dict[str, Any], client: httpx.Client) -> None:
        nonlocal errors
        t = time.perf_counter()
        r = client.post(url + path, json=body)
        lat.append((time.perf_counter() - t) * 1000)
        if r.status_code != 200:
            errors += 1
        elif path == "/ranking/preview":
            timings = r.json().get("timings_ms") or {}
            wait = float(timings.get("embed_wait") or 0.0)
            embed.append(wait)
            proper.append(float(timings.get("total") or 0.0) - wait)
            for stage, ms in timings.items():
                stages.setdefault(stage, []).append(float(ms or 0.0))

    clients = [httpx.Client(timeout=60) for _ in range(concurrency)]
    t0 = time.perf_counter()
    with ThreadPoolExecutor(concurrency) as pool:
        list(pool.map(lambda ib: one(ib[1], clients[ib[0] % concurrency]), enumerate(bodies)))
    wall = time.perf_counter() - t0
    for c in clients:
        c.close()
    out = {
        "p50_ms": statistics.median(lat),
        "p95_ms": pct(lat, 95),
        "rps": len(bodies) / wall,
        "errors": errors,
    }
    if proper:
        out |= {"embed_p50_ms": statistics.median(embed), "retrieval_p50_ms": statistics.median(proper),
                "stage_p50_ms": {k: round(statistics.median(v), 2) for k, v in stages.items()}}
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="+", default=[2000, 20000])
    ap.add_argument("--requests", type=int, default=100, help="per endpoint and size (unique questions)")
    ap.add_argument("--concurrency", type=int, nargs="+", default=[1, 4])
    ap.add_argument(
        "--base-cache",
        type=Path,
        default=None,
        help="JSON file keeping the ingested base graph between runs (written when missing)",
    )
    ap.add_argument("--backend", choices=BACKENDS, default="embedded")
    ap.add_argument("--graph-modes", nargs="+", default=[None], help="NEORAG_RETRIEVAL_GRAPH_MODE values "
                    "to compare: one server each, same graph, interleaved per size (default: the setting)")
    ap.add_argument("--variant", action="append", default=[], metavar="NAME:KEY=VALUE,...", help=VARIANT_HELP)
    args = ap.parse_args()
    modes = [(mode or "default", {"NEORAG_RETRIEVAL_GRAPH_MODE": mode} if mode else {}) for mode in args.graph_modes]
    variants = modes + parse_variants(args.variant)[1:]
    tmp = Path(tempfile.mkdtemp(prefix="neorag-bench-query"))
    bench = bench_store(args.backend, tmp / "store", cypher_dir=bench_library(tmp))
    bs = bench.__enter__()
    settings = bs.settings.model_copy(update={"graph_name": "bench_base"})
    print(f"backend {args.backend}, load average {os.getloadavg()[0]:.1f}", flush=True)
    questions = [q["question"] for q in json.loads((DATA / "hotpotqa_train.json").read_text())]
    mq = Path("/work/shared/data/musique-train100/musique_train.json")
    questions += [q["question"] for q in json.loads(mq.read_text())]
    rng = random.Random(0)
    results: list[dict[str, Any]] = []
    try:
        if args.base_cache and args.base_cache.exists():
            base = json.loads(args.base_cache.read_text())
            print(f"base graph from {args.base_cache}: {len(base['chunks'])} chunks", flush=True)
        else:
            base = export(ingest_base(settings))
            if args.base_cache:
                args.base_cache.write_text(json.dumps(base))
        for size in args.sizes:
            s = settings.model_copy(update={"graph_name": f"bench_{size}"})
            services = make_services(s)
            t = time.perf_counter()
            chunks = build_scaled(services, base, size)
            print(f"graph {size}: {chunks} chunks written in {time.perf_counter() - t:.1f} s", flush=True)
            for mode, extra in variants:
                proc, url = serve(s, bs.env, extra)
                # every request a question not seen before: the query embedding is computed, never cached
                qs = rng.sample(questions, len(questions))
                half = min(args.requests, len(qs) // 2)
                try:
                    for conc in args.concurrency:
                        for i, (path, key) in enumerate(
                            (("/ranking/preview", "question"), ("/retrieve", "query"))
                        ):
                            mine = qs[i * half : (i + 1) * half]
                            bodies = [{key: f"{q} (run {size}/{conc})"} for q in mine]
                            r = load(url, path, bodies, conc)
                            results.append({"chunks": chunks, "endpoint": path, "concurrency": conc,
                                            "variant": mode, "embedding": "computed", **r})
                            if path == "/ranking/preview":  # the same questions again: embeddings cached
                                cached = load(url, path, bodies, conc)
                                results.append({"chunks": chunks, "endpoint": path, "concurrency": conc,
                                                "variant": mode, "embedding": "cached", **cached})
                                print(f"{chunks:>7} {mode or '':<9} {path:<18} c={conc} question embedding cached: "
                                      f"p50 {cached['p50_ms']:7.1f} ms  p95 {cached['p95_ms']:7.1f} ms  (server "
                                      f"total p50 {cached['stage_p50_ms'].get('total', 0.0):.1f} ms)", flush=True)
                            split = (f"  (embedding wait p50 {r['embed_p50_ms']:.1f} ms, retrieval proper p50 "
                                     f"{r['retrieval_p50_ms']:.1f} ms)") if "retrieval_p50_ms" in r else ""
                            print(
                                f"{chunks:>7} {mode or '':<9} {path:<18} c={conc} p50 {r['p50_ms']:7.1f} ms  p95 {r['p95_ms']:7.1f} ms"
                                f"  {r['rps']:6.1f} req/s  errors {r['errors']}{split}",
                                flush=True,
                            )
                            if "stage_p50_ms" in r:
                                print("          stages p50 ms: " + ", ".join(
                                    f"{k} {v:.1f}" for k, v in r["stage_p50_ms"].items()), flush=True)
                finally:
                    proc.terminate()
                    proc.wait(timeout=30)
            services.store.run("graph_clear")
    finally:
        bench.__exit__(None, None, None)
        shutil.rmtree(tmp, ignore_errors=True)
    print(json.dumps(results, indent=1))
    if len(args.sizes) >= 2 and len(variants) == 1:
        for conc in args.concurrency:
            for path in ("/ranking/preview", "/retrieve"):
                for embedding in ("computed", "cached"):
                    rows = [r for r in results if r["endpoint"] == path and r["concurrency"] == conc
                            and r["embedding"] == embedding]
                    if rows:
                        print(f"growth {path} c={conc}, question embedding {embedding}: p50 "
                              f"x{rows[-1]['p50_ms'] / rows[0]['p50_ms']:.2f} ({rows[0]['chunks']} -> "
                              f"{rows[-1]['chunks']} chunks)")


if __name__ == "__main__":
    main()
