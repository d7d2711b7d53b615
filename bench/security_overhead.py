"""Benchmark: the cost of the request guards (Host, cross-site, keys, body checks) on POST /retrieve batch 1.

KG-R1 training loops send one-action batches in a tight loop, so that is the request measured. Three
servers on one embedded FalkorDB with the same loaded KG sample, each a uvicorn subprocess on 127.0.0.1:

  baseline   the app with the guard middlewares removed (what NeoRAG was before issue 14)
  guards     the default app: Host allow-list, cross-site check, body checks (no API keys)
  keys       guards + NEORAG_API_KEYS (the request sends X-API-Key) + NEORAG_CORS_ORIGINS + Origin header

One keep-alive connection per server; rounds interleave the three (baseline, guards, keys, baseline, ...),
so load drift on a shared machine hits all alike; the figure is the median over rounds of the mean
latency per request. A second, in-process figure times the two guard middlewares alone around an empty
ASGI app (microseconds per request, no network).

    .venv/bin/python bench/security_overhead.py --rounds 30 --requests 200
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.store.embedded import EmbeddedServer, free_port  # noqa: E402

KEY = "bench-write-key-000000001"
ORIGIN = "http://127.0.0.1:3000"
ITEM = [{"action_type": "get_relations", "dataset_name": "webqsp", "sample_id": "WebQTrn-0",
         "entity_id": "Justin Bieber"}]
VARIANTS = ("baseline", "guards", "keys")


def app() -> Any:
    """uvicorn factory: the variant named by NEORAG_BENCH_VARIANT (settings from the environment)."""
    from app.api.main import create_app
    from app.api.security.middleware import AccessGuard, EdgeGuard
    from app.core.config import Settings
    from app.services.container import build_services

    application = create_app(Settings(), services_factory=lambda s: build_services(s, start_embedded=False))
    if os.environ.get("NEORAG_BENCH_VARIANT") == "baseline":
        application.user_middleware = [m for m in application.user_middleware
                                       if m.cls not in (EdgeGuard, AccessGuard)]
    return application


def _serve(variant: str, falkor_port: int, data_dir: Path, graph: str) -> tuple[subprocess.Popen[bytes], int]:
    port = free_port()
    env = {**os.environ, "NEORAG_BENCH_VARIANT": variant, "NEORAG_FALKOR_PORT": str(falkor_port),
           "NEORAG_FALKOR_DATA_DIR": str(data_dir), "NEORAG_GRAPH_NAME": graph, "HF_HUB_OFFLINE": "1",
           "TRANSFORMERS_OFFLINE": "1", "NEORAG_EMBEDDING_QUERY_PRECISION": "fp32",
           "NEORAG_EMBEDDING_QUERY_WARM_WORDS": "0", "NEORAG_API_KEYS": "", "NEORAG_CORS_ORIGINS": "[]"}
    if variant == "keys":
        env.update({"NEORAG_API_KEYS": f"write:{KEY}", "NEORAG_CORS_ORIGINS": json.dumps([ORIGIN])})
    proc = subprocess.Popen([sys.executable, "-m", "uvicorn", "bench.security_overhead:app", "--factory",
                             "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning",
                             "--timeout-keep-alive", "600"],
                            cwd=ROOT, env=env)
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            conn.request("GET", "/health")
            if conn.getresponse().status == 200:
                return proc, port
        except OSError:
            time.sleep(0.5)
    proc.kill()
    raise RuntimeError(f"{variant} server did not start")


def _headers(variant: str) -> dict[str, str]:
    headers = {"Content-Type": "application/json"}
    if variant == "keys":
        headers.update({"X-API-Key": KEY, "Origin": ORIGIN})
    return headers


def _round(conn: http.client.HTTPConnection, variant: str, n: int) -> float:
    """Mean seconds per request over ``n`` sequential requests on one keep-alive connection."""
    body = json.dumps(ITEM).encode()
    headers = _headers(variant)
    start = time.perf_counter()
    for _ in range(n):
        conn.request("POST", "/retrieve", body=body, headers=headers)
        resp = conn.getresponse()
        data = resp.read()
        if resp.status != 200:
            raise RuntimeError(f"{variant}: {resp.status} {data[:200]!r}")
    return (time.perf_counter() - start) / n


def _guards_alone(n: int) -> dict[str, float]:
    """Microseconds per request of EdgeGuard + AccessGuard around an empty app (in-process, no network)."""
    from fastapi import FastAPI

    from app.api.security.middleware import AccessGuard, EdgeGuard
    from app.api.security.policy import Policy
    from app.core.config import Settings

    async def empty(scope: Any, receive: Any, send: Any) -> None:
        await receive()
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"[]"})

    routes = FastAPI().router.routes
    out: dict[str, float] = {}
    for variant in VARIANTS:
        keys = f"write:{KEY}" if variant == "keys" else ""
        policy = Policy.from_settings(Settings(_env_file=None, api_keys=keys,  # type: ignore[call-arg]
                                               cors_origins=[ORIGIN] if variant == "keys" else []))
        guarded = EdgeGuard(AccessGuard(empty, policy), policy, lambda: routes)
        app_: Any = empty if variant == "baseline" else guarded
        headers = [(k.lower().encode(), v.encode()) for k, v in _headers(variant).items()]
        headers += [(b"host", b"127.0.0.1:8001"), (b"content-length", str(len(json.dumps(ITEM))).encode())]
        scope = {"type": "http", "method": "POST", "path": "/retrieve", "headers": headers,
                 "query_string": b"", "root_path": ""}
        body = json.dumps(ITEM).encode()

        async def run(app_: Any = app_, scope: dict[str, Any] = scope, body: bytes = body) -> float:
            async def receive() -> dict[str, Any]:
                return {"type": "http.request", "body": body, "more_body": False}

            async def send(_: Any) -> None:
                return None

            start = time.perf_counter()
            for _ in range(n):
                await app_(dict(scope), receive, send)
            return (time.perf_counter() - start) / n * 1e6

        out[variant] = min(asyncio.run(run()) for _ in range(5))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--requests", type=int, default=200)
    args = parser.parse_args()
    from app.store.cypher_library import CypherLibrary
    from app.store.falkor import FalkorStore
    from ingest.kg.loader import load_path

    tmp = Path(tempfile.mkdtemp(prefix="neorag-secbench-"))
    store_server = EmbeddedServer(tmp / "db", port=free_port())
    info = store_server.start()
    procs: list[subprocess.Popen[bytes]] = []
    try:
        graph = "secbench"
        store = FalkorStore(CypherLibrary(ROOT / "cypher", "falkordb"), "127.0.0.1", info.port, graph)
        load_path(store, ROOT / "tests" / "fixtures" / "kg" / "rog", "webqsp")
        store.close()
        conns = {}
        for variant in VARIANTS:
            proc, port = _serve(variant, info.port, tmp / "db", graph)
            procs.append(proc)
            conns[variant] = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
            _round(conns[variant], variant, 50)  # warm-up: caches, connection
        means: dict[str, list[float]] = {v: [] for v in VARIANTS}
        for r in range(args.rounds):
            order = VARIANTS if r % 2 == 0 else tuple(reversed(VARIANTS))
            for variant in order:
                means[variant].append(_round(conns[variant], variant, args.requests))
        latency = {v: statistics.median(m) * 1e6 for v, m in means.items()}
        alone = _guards_alone(20_000)
        report = {
            "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
            "load_average": os.getloadavg(), "rounds": args.rounds, "requests_per_round": args.requests,
            "latency_us_median": {v: round(x, 1) for v, x in latency.items()},
            "ratio_vs_baseline": {v: round(latency[v] / latency["baseline"], 3) for v in VARIANTS},
            "paired_ratio_median": {v: round(statistics.median(
                a / b for a, b in zip(means[v], means["baseline"], strict=True)), 3) for v in VARIANTS},
            "guards_alone_us_per_request": {v: round(x, 2) for v, x in alone.items()},
        }
        print(json.dumps(report, indent=2))
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            proc.wait(timeout=30)
        store_server.stop()


if __name__ == "__main__":
    main()
