"""Benchmark: POST /retrieve (KG-R1 actions), NeoRAG beside the real KG-R1 server (anchor) and the stand-in.

One run: RoG-shaped samples (bench/kg_actions.make_samples) are written in KG-R1's own layout
(``entities.txt``, ``entities_text.txt``, ``relations.txt``, ``train_simple.json``) and in the per-sample
layout the in-memory stand-in reads (bench/kg_reference_server.py); NeoRAG loads the KG-R1 layout
(``ingest.kg.load_path``) into a fresh embedded FalkorDB and is served the way ``neorag serve`` serves it
(one process). With ``--kgr1 CHECKOUT`` the real server runs from a fetched KG-R1 checkout the way its
start script runs it (``uvicorn kg_r1.search.server:app --workers 4 --backlog 2048 ...``,
``KG_RELATION_FORMAT=flat``, ``KG_USE_ENTITIES_TEXT=true``, its five enabled actions). NeoRAG answers the
stand-in's requests in the seed's shape and the real server's in KG-R1's chat shape (``?format=chat``);
answers are cross-checked first. Then, per batch size and per connection mode (``keepalive``: a pool of
reused connections; ``new``: a new TCP connection per request, as KG-R1's client, ``requests.post``,
does), every server is driven with the same batches by ``--concurrency`` async workers, in alternating
rounds (best round kept); each server's CPU time per request (its processes, NeoRAG's with FalkorDB's)
is read from /proc over the best round, which a busy shared machine does not distort as it does
throughput. ``--before DIR`` adds NeoRAG served from another source tree (e.g. ``git archive <commit> |
tar -x -C DIR``) the way ``neorag serve`` served it there (h11, asyncio loop, access log: uvicorn's
defaults without httptools/uvloop); ``--workers N`` adds NeoRAG with ``neorag serve --workers N``.

    .venv/bin/python bench/kg_anchor.py --samples 1000 --triples 3000 \\
        --kgr1 /tmp/kgr1 --kgr1-python /tmp/kgr1-venv/bin/python
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.store.cypher_library import CypherLibrary  # noqa: E402
from app.store.embedded import EmbeddedServer, free_port  # noqa: E402
from app.store.falkor import FalkorStore  # noqa: E402
from bench.kg_actions import DATASET, make_samples, wait_http, write_seed_layout  # noqa: E402
from ingest.kg.loader import load_path  # noqa: E402

Samples = list[tuple[str, list[list[str]]]]
KGR1_ACTIONS = ("get_head_relations,get_tail_relations,get_head_entities,get_tail_entities,"
                "get_conditional_relations")  # KG_ENABLED_ACTIONS of its start script


def write_kgr1_layout(base: Path, samples: Samples) -> None:
    """KG-R1's own layout: global vocabularies, one JSON line per sample with index tuples."""
    folder = base / DATASET
    folder.mkdir(parents=True, exist_ok=True)
    names = sorted({e for _, triples in samples for h, _, t in triples for e in (h, t)})
    rels = sorted({r for _, triples in samples for _, r, _ in triples})
    ent_id = {n: i for i, n in enumerate(names)}
    rel_id = {r: i for i, r in enumerate(rels)}
    (folder / "entities_text.txt").write_text("".join(n + "\n" for n in names), encoding="utf-8")
    (folder / "entities.txt").write_text("".join(f"m.0{i:x}z\n" for i in range(len(names))), encoding="utf-8")
    (folder / "relations.txt").write_text("".join(r + "\n" for r in rels), encoding="utf-8")
    with (folder / "train_simple.json").open("w", encoding="utf-8") as out:
        for sid, triples in samples:
            tuples = [[ent_id[h], rel_id[r], ent_id[t]] for h, r, t in triples]
            members = sorted({i for h, _, t in tuples for i in (h, t)})
            out.write(json.dumps({"id": sid, "answers": [], "entities": [tuples[0][0]],
                                  "subgraph": {"tuples": tuples, "entities": members}}) + "\n")
    (folder / "test_simple.json").write_text("", encoding="utf-8")


def make_workload(samples: Samples, n: int, seed: int) -> list[dict[str, Any]]:
    """KG-R1's four actions (new names, as its prompt and client send them), 6% folded or unknown names."""
    rng = random.Random(seed)
    items = []
    for _ in range(n):
        sid, triples = samples[rng.randrange(len(samples))]
        h, r, t = triples[rng.randrange(len(triples))]
        base = {"dataset_name": DATASET, "sample_id": sid}
        roll = rng.random()
        if roll < 0.22:
            items.append({**base, "action_type": "get_relations_out", "entity_id": h})
        elif roll < 0.44:
            items.append({**base, "action_type": "get_relations_in", "entity_id": t})
        elif roll < 0.69:
            items.append({**base, "action_type": "get_entities_out", "entity_id": h, "relation": r})
        elif roll < 0.94:
            items.append({**base, "action_type": "get_entities_in", "entity_id": t, "relation": r})
        elif roll < 0.97:
            items.append({**base, "action_type": "get_relations_out", "entity_id": h.upper()})
        else:
            items.append({**base, "action_type": "get_relations_out", "entity_id": "Nobody Known"})
    return items


async def drive(url: str, batches: list[bytes], concurrency: int, keepalive: bool) -> dict[str, float]:
    """Send every batch (``concurrency`` workers); actions/s and per-request latency percentiles."""
    queue: asyncio.Queue[bytes] = asyncio.Queue()
    for b in batches:
        queue.put_nowait(b)
    latencies: list[float] = []
    headers = {"content-type": "application/json"} if keepalive else {"content-type": "application/json",
                                                                        "connection": "close"}
    limits = httpx.Limits(max_connections=concurrency,
                          max_keepalive_connections=concurrency if keepalive else 0)

    failures = 0

    async def worker(client: httpx.AsyncClient) -> None:
        nonlocal failures
        while not queue.empty():
            body = queue.get_nowait()
            t0 = time.perf_counter()
            for attempt in range(3):  # a worker process restarted by its supervisor drops its connections
                try:
                    resp = await client.post(url, content=body, headers=headers)
                    break
                except httpx.TransportError:
                    failures += 1
                    if attempt == 2:
                        raise
            latencies.append(time.perf_counter() - t0)
            if resp.status_code != 200:
                raise RuntimeError(f"bad answer from {url}: {resp.status_code} {resp.text[:200]}")

    async with httpx.AsyncClient(timeout=120, limits=limits) as client:
        t0 = time.perf_counter()
        await asyncio.gather(*(worker(client) for _ in range(concurrency)))
        wall = time.perf_counter() - t0
    latencies.sort()
    return {"requests_per_s": len(batches) / wall, "p50_ms": 1000 * statistics.median(latencies),
            "p95_ms": 1000 * latencies[min(len(latencies) - 1, int(0.95 * len(latencies)))],
            "failures": failures}


def chat_view(answer: dict[str, Any]) -> tuple[str, Any]:
    """(error type, content) with a shuffled relation list as a sorted list."""
    content = answer["choices"][0]["message"]["content"]
    head, _, rest = content.partition("\n")
    if answer["action"] in ("get_relations_in", "get_relations_out") and answer["success"]:
        return answer["kg_metadata"]["error_type"], (head, sorted(rest.split(", ")))
    return answer["kg_metadata"]["error_type"], content


def seed_view(answer: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in answer.items() if k != "query_time"}


class Servers:
    """The servers of one run (terminated together)."""

    def __init__(self) -> None:
        self.procs: list[subprocess.Popen[bytes]] = []

    def start(self, cmd: list[str], cwd: Path, env: dict[str, str], health: str) -> int:
        self.procs.append(subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL,
                                           stderr=subprocess.DEVNULL, start_new_session=True))
        wait_http(health, timeout_s=900)
        return self.procs[-1].pid

    def stop(self) -> None:
        """Terminate each server's process group (its workers too), killing what outlives 20 s."""
        for proc in self.procs:
            os.killpg(proc.pid, signal.SIGTERM)
        for proc in self.procs:
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                pass
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def _proc_table() -> dict[int, list[int]]:
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            children.setdefault(int(fields[1]), []).append(int(entry.name))
    return children


def cpu_seconds(roots: list[int]) -> float:
    """User + system CPU seconds of ``roots`` and all their descendants (from /proc)."""
    children, todo, total = _proc_table(), list(roots), 0
    while todo:
        pid = todo.pop()
        todo += children.get(pid, [])
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True, check=False).stdout.strip()


def main() -> None:  # noqa: PLR0915 - one linear benchmark script
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", type=int, default=200)
    parser.add_argument("--triples", type=int, default=3000)
    parser.add_argument("--requests", type=int, default=3000, help="requests per round at batch 1")
    parser.add_argument("--actions", type=int, default=40_000, help="actions per run at batch > 1")
    parser.add_argument("--batch-sizes", default="1,64,256")
    parser.add_argument("--modes", default="new,keepalive")
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--kgr1", type=Path, default=None, help="a fetched KG-R1 checkout (has kg_r1/search)")
    parser.add_argument("--kgr1-python", default=sys.executable)
    parser.add_argument("--kgr1-workers", type=int, default=4)
    parser.add_argument("--before", type=Path, default=None, help="another NeoRAG source tree to serve too")
    parser.add_argument("--workers", type=int, default=0, help="also serve NeoRAG with --workers N")
    parser.add_argument("--workdir", type=Path, default=None)
    args = parser.parse_args()
    work = args.workdir or Path(tempfile.mkdtemp(prefix="kganchor-"))
    work.mkdir(parents=True, exist_ok=True)
    print(f"start: {uptime()}", flush=True)
    servers = Servers()
    db = EmbeddedServer(work / "db", port=free_port())
    try:
        samples = make_samples(args.samples, args.triples)
        write_kgr1_layout(work / "kgr1", samples)
        write_seed_layout(work / "seed", samples)
        info = db.start()
        graph = "kganchor"
        store = FalkorStore(CypherLibrary(ROOT / "cypher", "falkordb"), "127.0.0.1", info.port, graph)
        report = load_path(store, work / "kgr1", DATASET)
        store.close()
        print(f"NeoRAG load (KG-R1 layout): {report.triples:,} distinct triples, {report.samples_loaded} "
              f"samples in {report.seconds:.1f}s = {report.triples_per_s:,.0f} triples/s", flush=True)

        env = {**os.environ, "NEORAG_FALKOR_DATA_DIR": str(work / "db"), "NEORAG_FALKOR_PORT": str(info.port),
               "NEORAG_GRAPH_NAME": graph, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
               "NEORAG_EMBEDDING_QUERY_PRECISION": "fp32", "NEORAG_EMBEDDING_QUERY_WARM_WORDS": "0"}
        urls: dict[str, str] = {}
        pids: dict[str, list[int]] = {}
        neorag = [sys.executable, "-c", "from app.cli import main; main()", "serve", "--host", "127.0.0.1"]
        variants = [("neorag", ROOT, neorag)]
        if args.workers > 1:
            variants.append((f"neorag-{args.workers}w", ROOT, [*neorag, "--workers", str(args.workers)]))
        if args.before:  # what `neorag serve` ran there: uvicorn's defaults, h11 and asyncio, access log on
            variants.append(("neorag-before", args.before,
                             [sys.executable, "-m", "uvicorn", "app.api.main:create_app", "--factory",
                              "--host", "127.0.0.1", "--http", "h11", "--loop", "asyncio",
                              "--log-level", "info"]))
        for name, tree, cmd in variants:
            port = free_port()
            pid = servers.start([*cmd, "--port", str(port)], tree, env, f"http://127.0.0.1:{port}/health")
            urls[name], pids[name] = f"http://127.0.0.1:{port}/retrieve", [pid, info.pid]
        port = free_port()
        pid = servers.start([sys.executable, str(ROOT / "bench" / "kg_reference_server.py"), "--base",
                             str(work / "seed"), "--port", str(port)], ROOT, env, f"http://127.0.0.1:{port}/health")
        urls["stand-in"], pids["stand-in"] = f"http://127.0.0.1:{port}/retrieve", [pid]
        if args.kgr1:
            port = free_port()
            kenv = {**os.environ, "KG_BASE_DATA_PATH": str(work / "kgr1"), "KG_SUPPORTED_KGS": DATASET,
                    "KG_USE_ENTITIES_TEXT": "true", "KG_RELATION_FORMAT": "flat",
                    "KG_ENABLED_ACTIONS": KGR1_ACTIONS, "KG_THREAD_WORKERS": str(args.kgr1_workers)}
            pid = servers.start([args.kgr1_python, "-m", "uvicorn", "kg_r1.search.server:app", "--host",
                                 "127.0.0.1", "--port", str(port), "--workers", str(args.kgr1_workers),
                                 "--backlog", "2048", "--limit-max-requests", "50000", "--timeout-keep-alive",
                                 "60", "--timeout-graceful-shutdown", "60"], args.kgr1, kenv,
                                f"http://127.0.0.1:{port}/health")
            urls["kg-r1"], pids["kg-r1"] = f"http://127.0.0.1:{port}/retrieve", [pid]
        print(f"servers up: {uptime()}", flush=True)

        # pairs: (server, its query string, the server it is compared with)
        pairs = [("neorag", "", "stand-in")] + ([("neorag", "?format=chat", "kg-r1")] if args.kgr1 else [])
        if args.before:
            pairs += [("neorag-before", "", "stand-in")]
        if args.workers > 1 and args.kgr1:
            pairs += [(f"neorag-{args.workers}w", "?format=chat", "kg-r1")]
        check = make_workload(samples, 1000, seed=3)
        for name, query, other in pairs:
            mine = httpx.post(urls[name] + query, json=check, timeout=120).json()
            theirs = httpx.post(urls[other], json=check, timeout=120).json()
            view = chat_view if query else seed_view
            same = sum(view(a) == view(b) for a, b in zip(mine, theirs, strict=True))
            print(f"cross-check {name}{query} vs {other}: {same}/{len(check)} answers identical", flush=True)

        targets = {"neorag (seed)": ("neorag", ""), "stand-in": ("stand-in", "")}
        if args.kgr1:
            targets["neorag (chat)"] = ("neorag", "?format=chat")
            if args.workers > 1:
                targets[f"neorag {args.workers}w (chat)"] = (f"neorag-{args.workers}w", "?format=chat")
            targets["kg-r1"] = ("kg-r1", "")
        if args.before:
            targets["neorag-before (seed)"] = ("neorag-before", "")
            if args.kgr1:
                targets["neorag-before (chat)"] = ("neorag-before", "?format=chat")
        print("\nactions/s, (p50 / p95 ms per request), [server CPU ms per request], {requests resent "
              "after a dropped connection, all rounds}\n")
        print("| batch | connections | " + " | ".join(targets)
              + " | NeoRAG seed / stand-in | NeoRAG chat / KG-R1 |", flush=True)
        print("|---|---|" + "---|" * (len(targets) + 2), flush=True)
        for size in (int(s) for s in args.batch_sizes.split(",")):
            n = args.requests * size if size == 1 else args.actions
            items = make_workload(samples, n, seed=100 + size)
            batches = [json.dumps(items[i:i + size]).encode() for i in range(0, len(items), size)]
            for mode in args.modes.split(","):
                keep = mode == "keepalive"
                for name, query in targets.values():  # warm every server (caches, workers) the same way
                    asyncio.run(drive(urls[name] + query, batches, args.concurrency, keep))
                runs: dict[str, list[dict[str, float]]] = {t: [] for t in targets}
                for r in range(args.rounds):
                    for t in (list(targets) if r % 2 == 0 else list(reversed(targets))):
                        name, query = targets[t]
                        cpu0 = cpu_seconds(pids[name])
                        result = asyncio.run(drive(urls[name] + query, batches, args.concurrency, keep))
                        result["cpu_ms"] = 1000 * (cpu_seconds(pids[name]) - cpu0) / len(batches)
                        runs[t].append(result)
                best = {t: max(v, key=lambda x: x["requests_per_s"]) for t, v in runs.items()}
                cells = [f"{b['requests_per_s'] * size:,.0f} ({b['p50_ms']:.1f} / {b['p95_ms']:.1f}) "
                         f"[{b['cpu_ms']:.2f}]" + (f" {{{sum(x['failures'] for x in runs[t]):.0f} resent}}"
                                                   if any(x["failures"] for x in runs[t]) else "")
                         for t, b in best.items()]
                rate = {t: b["requests_per_s"] for t, b in best.items()}
                ratio_seed = rate["neorag (seed)"] / rate["stand-in"]
                ratio_chat = f"{rate['neorag (chat)'] / rate['kg-r1']:.2f}x" if args.kgr1 else "-"
                print(f"| {size} | {mode} | " + " | ".join(cells) + f" | {ratio_seed:.2f}x | {ratio_chat} |",
                      flush=True)
            print(f"  ({uptime()})", flush=True)
        print(f"\nmachine: {platform.platform()}, {os.cpu_count()} CPUs, Python {platform.python_version()}; "
              f"end: {uptime()}")
    finally:
        servers.stop()
        db.stop()
        if args.workdir is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
