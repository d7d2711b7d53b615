"""Local LLM benchmark (issue 15): the bundled SmolLM2-135M GGUF served by NEORAG_LLM_BASE_URL=local.

Usage: .venv/bin/python bench/llm_local.py [--rounds 2] [--paragraphs 8] [--out F] [--skip tps,ingest,valid]

1. tokens/s: prompt and generation as llama.cpp times them (a ~200-token prompt, 64 tokens generated,
   prompt cache off), 1 vs 2 CPU threads, interleaved, 5 requests per variant and round (median).
2. ingest chunks/s: the first N paragraphs of tests/fixtures/ingest/hotpotqa_corpus.json (one chunk each)
   into a fresh graph, heuristic entities (no LLM) vs LLM entities + LLM relations (entity REL per chunk and
   chunk-pair REL, window 1) at 1, 2 and 4 parallel slots (the server is restarted per slot count; requests
   are sent that many at a time); extraction cache off; variants interleaved per round.
3. share of replies valid at the first try per structured mode (json_schema, json_object, text): entity
   extraction and entity relations on the same paragraphs, CoRAG sub-queries on 4 HotpotQA questions and 4
   history rewrites; counts from NeoRAG's own StructuredStats.

Every figure of one run comes from the same machine state; `uptime` is printed before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.core.config import Settings  # noqa: E402
from app.services.container import build_services  # noqa: E402
from app.services.llm import LLMClient  # noqa: E402
from app.services.local_llm import LocalLLM, bundled_model  # noqa: E402
from app.services.local_llm_server import ServeConfig  # noqa: E402
from app.store.embedded import EmbeddedServer  # noqa: E402
from ingest.entities import extract_heuristic  # noqa: E402
from ingest.options import IngestOptions  # noqa: E402
from ingest.pipeline import ingest_path  # noqa: E402

CORPUS = ROOT / "tests" / "fixtures" / "ingest" / "hotpotqa_corpus.json"
QUESTIONS = ["If Gallu is a demon Lilu is what?",
             "Who directed the film shot in Leland, North Carolina in 1986?",
             "Which magazine was started first, Arthur's Magazine or First for Women?",
             "What government position was held by the woman who portrayed Corliss Archer in Kiss and Tell?"]
FOLLOW_UPS = [
    ([("user", "Tell me about Cologne Cathedral."), ("assistant", "A Gothic church.")], "When was it built?"),
    ([("user", "Who founded the University of Basel?"), ("assistant", "Pope Pius II.")], "When did he live?"),
    ([("user", "What is the Rhine?"), ("assistant", "A European river.")], "How long is it?"),
    ([("user", "Who was Ada Lovelace?"), ("assistant", "A mathematician.")], "Who did she work with?"),
]
PROMPT = ("Summarise in one sentence: " + "The Rhine flows from the Swiss Alps to the North Sea, passing "
          "Basel, Strasbourg, Cologne and Rotterdam on its way. " * 6)


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def tokens_per_s(rounds: int) -> dict[str, Any]:
    model = bundled_model()
    assert model is not None
    out: dict[str, dict[str, list[float]]] = {}
    for _ in range(rounds):
        for threads in (1, 2):
            server = LocalLLM(ServeConfig(model, ctx=1024, parallel=1, threads=threads)).start(measure=False)
            try:
                for _ in range(5):
                    body = {"messages": [{"role": "user", "content": PROMPT}], "max_tokens": 64,
                            "temperature": 0.0, "cache_prompt": False}
                    req = urllib.request.Request(f"{server.base_url}/chat/completions",
                                                 data=json.dumps(body).encode(),
                                                 headers={"Content-Type": "application/json"})
                    with urllib.request.urlopen(req, timeout=300) as resp:
                        t = json.loads(resp.read())["timings"]
                    rec = out.setdefault(f"threads={threads}", {"prompt": [], "generation": []})
                    rec["prompt"].append(t["prompt_per_second"])
                    rec["generation"].append(t["predicted_per_second"])
            finally:
                server.stop()
    return {k: {"prompt_tokens_per_s": round(statistics.median(v["prompt"]), 1),
                "generation_tokens_per_s": round(statistics.median(v["generation"]), 1),
                "samples": len(v["prompt"])} for k, v in out.items()}


def _corpus(tmp: Path, n: int) -> Path:
    data = json.loads(CORPUS.read_text())
    items = list(data.items())[:n] if isinstance(data, dict) else data[:n]
    path = tmp / "corpus.json"
    path.write_text(json.dumps(dict(items) if isinstance(data, dict) else items))
    return path


def ingest_rates(rounds: int, n: int) -> dict[str, Any]:
    tmp = Path(tempfile.mkdtemp(prefix="neorag-bench-llm-"))
    server = EmbeddedServer(tmp / "falkordb")
    info = server.start()
    corpus = _corpus(tmp, n)
    base = Settings(falkor_data_dir=tmp / "falkordb", falkor_port=info.port, llm_cache_enabled=False,
                    relation_window=1, llm_local_ctx=2048)
    results: dict[str, list[dict[str, Any]]] = {}
    try:
        for rnd in range(rounds):
            for variant in ("heuristic", "llm_parallel_1", "llm_parallel_2", "llm_parallel_4"):
                extra: dict[str, Any] = {"graph_name": f"bench_{variant}_{rnd}"}
                if variant != "heuristic":
                    extra.update(llm_base_url="local", llm_parallel=int(variant.rsplit("_", 1)[1]),
                                 ingest_entity_mode="llm", ingest_llm_relations="on")
                services = build_services(base.model_copy(update=extra), start_embedded=False)
                try:
                    started = time.perf_counter()
                    res = ingest_path(services, corpus, IngestOptions(checkpoint=False))
                    wall = time.perf_counter() - started
                finally:
                    services.store.drop_graph()  # type: ignore[attr-defined]
                    services.close()
                results.setdefault(variant, []).append({
                    "chunks": res.chunks_new, "seconds": round(wall, 2),
                    "chunks_per_s": round(res.chunks_new / wall, 3), "entity_errors": res.llm_entity_errors,
                    "entity_rel_edges": res.llm_entity_rel_edges, "chunk_rel_edges": res.llm_rel_edges,
                    "chunk_rel_errors": res.llm_rel_errors, "entity_rel_errors": res.llm_entity_rel_errors})
                print(variant, rnd, results[variant][-1], flush=True)
    finally:
        server.stop()
    return results


def valid_shares(n: int) -> dict[str, Any]:
    from app.reasoning.corag import CoRAGAgent, RagPath
    from app.retrieval.rewrite import PROMPT as REWRITE_PROMPT
    from app.retrieval.rewrite import Rewrite, _first_line
    from app.services.structured import ask
    from ingest.llm_entities import extract_llm
    from ingest.llm_entity_relations import extract_relations

    model = bundled_model()
    assert model is not None
    data = json.loads(CORPUS.read_text())
    texts = [" ".join(v) if isinstance(v, list) else str(v) for v in (data.values() if isinstance(data, dict)
                                                                       else [d["text"] for d in data])][:n]
    s = Settings()
    server = LocalLLM(ServeConfig(model, ctx=2048, parallel=1, threads=1)).start(measure=False)
    out: dict[str, Any] = {}
    try:
        for mode in ("json_schema", "json_object", "text"):
            llm = LLMClient(server.base_url, "x", server.model_name, timeout_s=300, max_retries=0,
                            structured_output=mode)
            for text in texts:
                extract_llm(llm, text, tuple(s.ingest_entity_types), 20)
                names = tuple(m.name for m in extract_heuristic(text))
                extract_relations(llm, text, names, tuple(s.ingest_relation_types), 8)
            agent = CoRAGAgent(llm, lambda q, k: [])
            for q in QUESTIONS:
                agent.next_subquery(q, RagPath(), 0.0)
            for history, question in FOLLOW_UPS:
                convo = "\n".join(f"{r}: {c}" for r, c in history)
                turn = f"Conversation:\n{convo}\n\nLast question: {question}"
                ask(llm, [{"role": "system", "content": REWRITE_PROMPT}, {"role": "user", "content": turn}],
                    Rewrite, task="query_rewrite", max_tokens=96, temperature=0.0, legacy=_first_line)
            out[mode] = llm.structured_stats.as_dict().get(mode, {})
            print(mode, json.dumps(out[mode]), flush=True)
    finally:
        server.stop()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--paragraphs", type=int, default=8)
    parser.add_argument("--skip", default="", help="comma-separated parts to skip: tps, ingest, valid")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    skip = set(filter(None, args.skip.split(",")))
    report: dict[str, Any] = {"uptime_before": uptime(), "cpus": os.cpu_count()}
    print(report["uptime_before"], flush=True)
    if "tps" not in skip:
        report["tokens_per_s"] = tokens_per_s(args.rounds)
        print(json.dumps(report["tokens_per_s"]), flush=True)
    if "ingest" not in skip:
        report["ingest"] = ingest_rates(args.rounds, args.paragraphs)
    if "valid" not in skip:
        report["valid_first_try"] = valid_shares(args.paragraphs)
    report["uptime_after"] = uptime()
    print(json.dumps(report, indent=1))
    if args.out:
        args.out.write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
