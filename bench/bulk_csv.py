"""The bulk import's CSV pass alone (``BulkWriter``), with 0..N bucket workers, on bench/kg_actions.py's data.

    .venv/bin/python bench/bulk_csv.py --samples 1000 --triples 3000 --workers 0,1,2,3 [--rounds 2]

Prints, per worker count and round, the wall time of the pass, the CPU time of the reading process and of
its workers, and checks that every run wrote the same rows (the ``KGFacts`` rows as a sorted set, every
other file byte for byte). The import itself, the start and the indexes: ``bench/kg_actions.py --bulk``.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.kg_actions import DATASET, make_samples, write_seed_layout  # noqa: E402
from ingest.kg.bulk import BulkWriter  # noqa: E402
from ingest.kg.bulk_facts import PART_GLOB  # noqa: E402
from ingest.kg.readers import read_records  # noqa: E402


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def digest(folder: Path) -> str:
    """One hash of the files: the KGFacts rows as a sorted set (spread over files), the rest byte for byte."""
    h = hashlib.sha256()
    rows: list[bytes] = []
    for path in [folder / "facts.csv", *sorted(folder.glob(PART_GLOB))]:
        rows += path.read_bytes().split(b'"\n"')  # a row ends with a quoted field; the next starts with one
    for row in sorted(r.strip(b'"\n') for r in rows if r.strip(b'"\n')):
        h.update(row)
    for path in sorted(folder.glob("*.csv")):
        if not path.name.startswith("facts"):
            h.update(path.name.encode() + path.read_bytes())
    return h.hexdigest()[:12]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", type=int, default=1000)
    parser.add_argument("--triples", type=int, default=3000)
    parser.add_argument("--workers", default="0,1,2,3",
                        help="worker counts, comma-separated (0 = in process)")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--workdir", type=Path, default=None)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-bulk-csv-", dir=args.workdir))
    try:
        samples = make_samples(args.samples, args.triples)
        write_seed_layout(work / "data", samples)
        del samples
        print(f"{args.samples} samples x {args.triples} triples; load average {os.getloadavg()[0]:.2f}")
        for rnd in range(args.rounds):
            for workers in map(int, args.workers.split(",")):
                out = work / f"csv-{workers}"
                out.mkdir()
                writer = BulkWriter(out, DATASET, workers=workers)
                wall, cpu, kids = time.perf_counter(), time.process_time(), children_cpu()
                report = writer.write_all(read_records(work / "data", DATASET, on_bad=writer.report.reject))
                wall, cpu, kids = time.perf_counter() - wall, time.process_time() - cpu, children_cpu() - kids
                print(f"round {rnd + 1} workers {workers}: {wall:.2f} s wall, reading process {cpu:.2f} s "
                      f"CPU, workers {kids:.2f} s CPU; {report.distinct_triples:,} distinct triples "
                      f"({report.distinct_triples / wall:,.0f}/s); files {digest(out)}", flush=True)
                shutil.rmtree(out)
        print(f"load average {os.getloadavg()[0]:.2f}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
