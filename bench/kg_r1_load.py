"""Benchmark: loading KG-R1's own layout vs today's RoG loader on the same triples, and the union lookup.

The same generated samples (bench/kg_actions.make_samples) are written as RoG JSON Lines (``{id,
graph}`` per line, read by ``KGRecord.from_rog``) and in KG-R1's layout (bench/kg_anchor.write_kgr1_layout),
then (1) read only, and (2) loaded with ``ingest.kg.load_path`` into fresh graphs of one embedded FalkorDB,
the two formats alternating (RoG, KG-R1, RoG, KG-R1, ...). (3) Times one fact bucket's lookups: NeoRAG's
exact-else-smallest match, KG-R1's union with an exact match (no variants; two variants), and the whole
bucket decoded (what a union without a per-line variant list would cost).

    .venv/bin/python bench/kg_r1_load.py --samples 300 --triples 3000 --rounds 2
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
import timeit
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.kg.facts import decode_facts, encode_facts, resolve_facts, resolve_union  # noqa: E402
from app.store.cypher_library import CypherLibrary  # noqa: E402
from app.store.embedded import EmbeddedServer, free_port  # noqa: E402
from app.store.falkor import FalkorStore  # noqa: E402
from bench.kg_actions import DATASET, make_samples  # noqa: E402
from bench.kg_anchor import uptime, write_kgr1_layout  # noqa: E402
from ingest.kg import kgr1  # noqa: E402
from ingest.kg.loader import load_path  # noqa: E402
from ingest.kg.readers import read_records  # noqa: E402


def union_timings() -> None:
    triples = {(f"Entity {i}", f"people.person.p{i % 7}", f"Entity {(i * 7) % 90}") for i in range(126)}
    triples |= {("Paris", "location.location.containedby", "France"),
                ("paris", "location.location.containedby", "Texas")}
    _, rows = encode_facts("d/s", sorted(triples))
    text = rows[0]["facts"]
    lines = text.count("\n") + 1
    cases = [("NeoRAG exact match (resolve_facts)", lambda: resolve_facts(text, "Entity 42")),
             ("KG-R1 union, exact match, no variant (resolve_union)",
              lambda: resolve_union(text, "Entity 42")),
             ("KG-R1 union, exact match + 1 variant (resolve_union)", lambda: resolve_union(text, "Paris")),
             ("KG-R1 union, no exact match (whole bucket decoded)", lambda: resolve_union(text, "PARIS")),
             ("whole bucket decoded (decode_facts)", lambda: decode_facts(text))]
    print(f"\none fact bucket: {len(triples)} triples, {lines} lines, {len(text):,} characters")
    for name, fn in cases:
        n = 2000
        best = min(timeit.repeat(fn, number=n, repeat=5)) / n
        print(f"| {name} | {best * 1e6:.1f} us |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", type=int, default=300)
    parser.add_argument("--triples", type=int, default=3000)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="kgr1load-"))
    server = EmbeddedServer(work / "db", port=free_port())
    print(f"start: {uptime()}", flush=True)
    try:
        samples = make_samples(args.samples, args.triples)
        with (work / "rog.jsonl").open("w", encoding="utf-8") as out:
            for sid, triples in samples:
                out.write(json.dumps({"id": sid, "question": "", "answer": [], "graph": triples}) + "\n")
        write_kgr1_layout(work / "kgr1", samples)
        raw = sum(len(t) for _, t in samples)
        for name, read in (("RoG JSON Lines", lambda: read_records(work / "rog.jsonl", DATASET)),
                           ("KG-R1 layout", lambda: kgr1.open_source(work / "kgr1" / DATASET).records())):
            t0 = time.perf_counter()
            count = sum(len(r.triples) for r in read())
            print(f"read only, {name}: {count:,} triples in {time.perf_counter() - t0:.1f}s = "
                  f"{count / (time.perf_counter() - t0):,.0f} triples/s", flush=True)
        info = server.start()
        print("\n| round | format | distinct triples | seconds | triples/s |\n|---|---|---|---|---|")
        for r in range(args.rounds):
            for name, path in (("RoG JSON Lines", work / "rog.jsonl"), ("KG-R1 layout", work / "kgr1")):
                graph = f"load_{r}_{'kgr1' if 'KG' in name else 'rog'}"
                store = FalkorStore(CypherLibrary(ROOT / "cypher", "falkordb"), "127.0.0.1", info.port, graph)
                report = load_path(store, path, DATASET)
                print(f"| {r + 1} | {name} | {report.triples:,} | {report.seconds:.1f} | "
                      f"{report.triples_per_s:,.0f} |", flush=True)
                store.drop_graph()
                store.close()
        print(f"({raw:,} triples with duplicates generated; {uptime()})")
        union_timings()
        print(f"\nmachine: {os.cpu_count()} CPUs; end: {uptime()}")
    finally:
        server.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
