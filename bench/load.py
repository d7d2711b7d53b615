"""Load test of a real `neorag serve`: N concurrent clients for D seconds, at each worker count.

Run: .venv/bin/python bench/load.py [--clients 50] [--duration 120] [--workers 1 2] [--kill-store-at 60]
     [--variant NAME:KEY=VALUE,KEY=VALUE ...] [--out F.json]

``--variant`` runs every round once more per variant, the server started with those extra environment
variables (e.g. ``--variant arena2:MALLOC_ARENA_MAX=2``), so settings are compared side by side in one run;
the plain server is the variant ``default``.

The corpus is the repository's HotpotQA slice (tests/fixtures/retrieval/hotpot_corpus.json, 60 paragraphs),
ingested once into a temporary data dir through POST /ingest (no LLM); every worker count then serves that
same data dir. Each client loops over a mix of requests (weights in MIX): POST /query (no LLM configured:
the retrieval-only answer with cited sources), POST /ranking/preview, CoRAG POST /retrieve (object body),
GET /health, and KG-action batches (POST /retrieve with a list body of 16 KG-R1 actions drawn from the
requests recorded against the real KG-R1 server, tests/fixtures/kg_r1_golden, whose webqsp folder is loaded
with `neorag kg load` first); questions are HotpotQA questions with a per-request suffix so the answer cache
does not serve them. Reports requests/s, p50/p95/p99 per endpoint, errors (non-2xx or transport errors)
and the resident memory (RSS) of the server's process tree (API processes and FalkorDB) sampled every 5 s.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.variants import VARIANT_HELP, parse_variants  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
FIX = REPO / "tests" / "fixtures" / "retrieval"
NEORAG = str(Path(sys.executable).parent / "neorag")
KG = REPO / "tests" / "fixtures" / "kg_r1_golden"
KG_BATCH = 16
MIX = (("query", 3), ("preview", 3), ("retrieve", 3), ("kg", 3), ("health", 1))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def tree_rss_mb(root: int) -> float:
    """Resident memory of ``root`` and all its descendants (MB), from /proc."""
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            status = (entry / "status").read_text()
        except OSError:
            continue
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        pid, ppid = int(entry.name), int(fields.get("PPid", "0").strip())
        children.setdefault(ppid, []).append(pid)
        rss[pid] = int(fields.get("VmRSS", "0 kB").split()[0])
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        total += rss.get(pid, 0)
        todo.extend(children.get(pid, []))
    return round(total / 1024, 1)


def start_server(data_dir: Path, workers: int, corpus_root: Path, log: Path,
                 extra_env: dict[str, str] | None = None) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    env = {**os.environ, **(extra_env or {}), "NEORAG_DATA_DIR": str(data_dir), "NEORAG_FALKOR_PORT": "0",
           "NEORAG_API_PORT": str(port), "NEORAG_INGEST_ROOTS": json.dumps([str(corpus_root)]),
           "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    env.pop("NEORAG_LLM_BASE_URL", None)
    with open(log, "ab") as out:
        proc = subprocess.Popen([NEORAG, "serve", "--workers", str(workers)], env=env, stdout=out,
                                stderr=subprocess.STDOUT, cwd=data_dir.parent)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"neorag serve exited ({proc.returncode}); see {log}")
        try:
            if httpx.get(url + "/health", timeout=5).status_code == 200:
                return proc, url
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    stop_server(proc)  # never leave a half-started server (and its store) behind
    raise SystemExit(f"neorag serve not healthy in 300 s; see {log}")


def stop_server(proc: subprocess.Popen[bytes]) -> None:
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(timeout=120)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def kg_actions() -> list[dict[str, Any]]:
    """The webqsp KG-R1 actions of the recorded golden requests (entity-name configuration)."""
    out = []
    for line in (KG / "golden.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if row["config"] == "text-flat" and isinstance(row.get("request"), list):
            out += [a for a in row["request"] if isinstance(a, dict) and a.get("dataset_name") == "webqsp"]
    return out


KG_ACTIONS: list[dict[str, Any]] = []


def request_for(kind: str, question: str) -> tuple[str, str, Any]:
    if kind == "kg":
        return "POST", "/retrieve", random.sample(KG_ACTIONS, min(KG_BATCH, len(KG_ACTIONS)))
    if kind == "query":
        return "POST", "/query", {"question": question, "top_k": 5}
    if kind == "preview":
        return "POST", "/ranking/preview", {"question": question, "top_k": 5}
    if kind == "retrieve":
        return "POST", "/retrieve", {"query": question, "top_k": 10}
    return "GET", "/health", None


async def run_load(url: str, clients: int, duration_s: float, questions: list[str],
                   server_pid: int, kill_store_at: float | None = None,
                   store_dir: Path | None = None) -> dict[str, Any]:
    kinds = [k for k, w in MIX for _ in range(w)]
    latencies: dict[str, list[float]] = {k: [] for k, _ in MIX}
    errors: dict[str, int] = {}
    rss: list[tuple[float, float]] = []
    start = time.monotonic()
    stop_at = start + duration_s
    counter = 0

    async def client(n: int, http: httpx.AsyncClient) -> None:
        nonlocal counter
        rng = random.Random(n)
        while time.monotonic() < stop_at:
            kind = rng.choice(kinds)
            counter += 1
            method, path, body = request_for(kind, f"{rng.choice(questions)} ({counter})")
            t0 = time.perf_counter()
            try:
                resp = await http.request(method, path, json=body)
                ok = 200 <= resp.status_code < 300
                key = f"{kind}:{resp.status_code}"
            except httpx.HTTPError as exc:
                ok, key = False, f"{kind}:{type(exc).__name__}"
            if ok:
                latencies[kind].append((time.perf_counter() - t0) * 1000)
            else:
                errors[key] = errors.get(key, 0) + 1

    killed: dict[str, Any] = {}

    async def kill_store() -> None:  # kill -9 of FalkorDB mid-load: the supervisor restarts it
        if kill_store_at is None or store_dir is None:
            return
        await asyncio.sleep(kill_store_at)
        pid = json.loads((store_dir / "neorag-falkordb.json").read_text())["pid"]
        os.kill(pid, signal.SIGKILL)
        killed.update({"at_s": kill_store_at, "pid": pid})
        t0 = time.monotonic()
        while time.monotonic() < stop_at:
            try:
                state = json.loads((store_dir / "neorag-falkordb.json").read_text())
                if state["pid"] != pid and httpx.get(url + "/health", timeout=5).status_code == 200:
                    killed["healthy_again_after_s"] = round(time.monotonic() - t0, 2)
                    return
            except (OSError, ValueError, httpx.HTTPError):
                pass
            await asyncio.sleep(0.1)

    async def sample_rss() -> None:
        while time.monotonic() < stop_at:
            rss.append((round(time.monotonic() - start, 1), tree_rss_mb(server_pid)))
            await asyncio.sleep(5)

    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(base_url=url, timeout=60, limits=limits) as http:
        await asyncio.gather(sample_rss(), kill_store(), *(client(i, http) for i in range(clients)))
    rss.append((round(time.monotonic() - start, 1), tree_rss_mb(server_pid)))
    elapsed = time.monotonic() - start
    total = sum(len(v) for v in latencies.values()) + sum(errors.values())

    def pct(values: list[float], q: float) -> float | None:
        if not values:
            return None
        ordered = sorted(values)
        return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 1)

    per_kind = {k: {"n": len(v), "p50_ms": pct(v, 0.5), "p95_ms": pct(v, 0.95), "p99_ms": pct(v, 0.99),
                    "mean_ms": round(statistics.fmean(v), 1) if v else None} for k, v in latencies.items()}
    everything = [x for v in latencies.values() for x in v]
    return {"clients": clients, "duration_s": round(elapsed, 1), "requests": total,
            "requests_per_s": round(total / elapsed, 1), "errors": errors,
            "p50_ms": pct(everything, 0.5), "p95_ms": pct(everything, 0.95), "p99_ms": pct(everything, 0.99),
            "per_endpoint": per_kind, "store_killed": killed or None,
            "rss_slope_mb_per_min_after_60s": rss_slope(rss), "rss_mb": rss}


def rss_slope(samples: list[tuple[float, float]], after_s: float = 60.0) -> float | None:
    """Least-squares growth of the RSS samples taken after ``after_s`` (MB per minute): ~0 when flat."""
    late = [(t, mb) for t, mb in samples if t >= after_s]
    if len(late) < 3:
        return None
    slope, _ = statistics.linear_regression([t for t, _ in late], [mb for _, mb in late])
    return round(slope * 60, 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--duration", type=float, default=120.0)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--kill-store-at", type=float, default=None,
                        help="One more round at 1 worker, with kill -9 of FalkorDB after this many s.")
    parser.add_argument("--variant", action="append", default=[], metavar="NAME:KEY=VALUE,...",
                        help=VARIANT_HELP)
    args = parser.parse_args()
    variants = parse_variants(args.variant)

    tmp = Path(tempfile.mkdtemp(prefix="neorag-load-"))
    corpus_root = tmp / "corpus"
    corpus_root.mkdir()
    shutil.copy(FIX / "hotpot_corpus.json", corpus_root / "hotpot_corpus.json")
    questions = [q["question"] for q in json.loads((FIX / "hotpot_questions.json").read_text())]
    data_dir = tmp / ".neorag"
    log = tmp / "serve.log"
    results: dict[str, Any] = {"uptime_before": os.getloadavg(), "cpus": os.cpu_count(), "runs": []}
    try:
        proc, url = start_server(data_dir, 1, corpus_root, log)
        t0 = time.monotonic()
        ingested = httpx.post(url + "/ingest", json={"path": str(corpus_root)}, timeout=1800)
        ingested.raise_for_status()
        print(f"ingested {ingested.json().get('chunks_total')} chunks in {time.monotonic() - t0:.0f} s",
              flush=True)
        KG_ACTIONS.extend(kg_actions())
        env = {**os.environ, "NEORAG_DATA_DIR": str(data_dir), "HF_HUB_OFFLINE": "1"}
        subprocess.run([NEORAG, "kg", "load", str(KG / "data_kg" / "webqsp"), "--dataset", "webqsp"],
                       env=env, check=True, cwd=data_dir.parent, stdout=subprocess.DEVNULL)
        print(f"KG loaded; {len(KG_ACTIONS)} recorded KG actions, batches of {KG_BATCH}", flush=True)
        stop_server(proc)
        rounds = [(w, None, name, extra) for name, extra in variants for w in args.workers]
        if args.kill_store_at is not None:
            rounds.append((1, args.kill_store_at, "default", {}))
        for workers, kill_at, variant, extra in rounds:
            proc, url = start_server(data_dir, workers, corpus_root, log, extra)
            try:
                for question in questions[:2]:  # warm each worker's encoder a little
                    httpx.post(url + "/ranking/preview", json={"question": question}, timeout=120)
                load_before = os.getloadavg()
                run = asyncio.run(run_load(url, args.clients, args.duration, questions, proc.pid, kill_at,
                                           data_dir / "falkordb"))
                run.update({"workers": workers, "variant": variant, "loadavg_before": load_before,
                            "loadavg_after": os.getloadavg()})
                results["runs"].append(run)
                print(json.dumps({k: v for k, v in run.items() if k != "rss_mb"}), flush=True)
                print("rss_mb over time:", run["rss_mb"], flush=True)
            finally:
                stop_server(proc)
    finally:
        if args.out:
            args.out.write_text(json.dumps(results, indent=2))
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
