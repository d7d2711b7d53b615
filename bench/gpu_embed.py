"""Document-embedding throughput of NeoRAG's ``Embedder`` on CPU and on a CUDA GPU, side by side (issue 24's
optional GPU column; never required: NeoRAG's figures are CPU figures).

Runs ``Embedder.encode_raw`` (what ingest calls, ``NEORAG_EMBEDDING_DEVICE`` picks the device) over real
passages, on every device the machine has: ``cpu`` at each batch size, then ``cuda`` in fp32 and fp16. Each
timing is the best of ``--repeats`` passes after one warm pass. GPU vectors are checked against the CPU
ones (cosine) so a fast device is not a wrong one.

    python bench/gpu_embed.py --model <sentence-transformers dir> --texts passages.json --out gpu.json

``--texts``: a JSON list of strings, or of objects with ``text`` (a pool's ``*_corpus.json``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def load_texts(path: Path, limit: int) -> list[str]:
    """Passages from a JSON list of strings or of ``{"text": ...}`` records (the first ``limit``)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    texts = [d if isinstance(d, str) else f"{d.get('title', '')}\n{d['text']}".strip() for d in data]
    return texts[:limit] if limit else texts


def timed_pass(encode: Any, texts: list[str], repeats: int) -> tuple[float, np.ndarray]:
    """(best seconds over ``repeats`` passes after a warm one, the vectors)."""
    vecs = np.asarray(encode(texts))
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        encode(texts)
        best = min(best, time.perf_counter() - t)
    return best, vecs


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", required=True, help="a sentence-transformers directory, or the default name")
    ap.add_argument("--texts", type=Path, required=True)
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--batch-sizes", type=int, nargs="+", default=[64, 256])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--cpu-texts", type=int, default=1000, help="passages timed on CPU (it is the slow one)")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    import torch

    from app.services.embedder import Embedder

    texts = load_texts(args.texts, args.limit)
    report: dict[str, Any] = {
        "passages": len(texts), "model": args.model, "torch": torch.__version__,
        "cpu": platform.processor() or platform.machine(), "cpu_count": os.cpu_count(),
        "torch_threads": torch.get_num_threads(),
        "gpu": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None, "rows": [],
    }
    cpu = Embedder(args.model, device="cpu")
    cpu._model.float()
    sample = texts[: args.cpu_texts]
    reference: np.ndarray | None = None
    for bs in args.batch_sizes:
        secs, vecs = timed_pass(lambda t, bs=bs: cpu.encode_raw(t, bs), sample, args.repeats)
        reference = vecs if reference is None else reference
        report["rows"].append({"device": "cpu", "dtype": "fp32", "batch": bs, "passages": len(sample),
                               "seconds": round(secs, 3), "passages_per_s": round(len(sample) / secs, 1)})
        print(report["rows"][-1], flush=True)
    if torch.cuda.is_available():
        gpu = Embedder(args.model, device="cuda")
        for dtype in ("fp32", "fp16"):
            if dtype == "fp16":
                gpu._model.half()
            else:
                gpu._model.float()
            for bs in args.batch_sizes:
                def encode(t: list[str], bs: int = bs) -> list[list[float]]:
                    out = gpu.encode_raw(t, bs)
                    torch.cuda.synchronize()
                    return out
                secs, vecs = timed_pass(encode, texts, args.repeats)
                assert reference is not None
                cos = np.sum(vecs[: len(sample)] * reference, axis=1)
                report["rows"].append({
                    "device": "cuda", "dtype": dtype, "batch": bs, "passages": len(texts),
                    "seconds": round(secs, 3), "passages_per_s": round(len(texts) / secs, 1),
                    "min_cosine_vs_cpu": round(float(cos.min()), 6),
                })
                print(report["rows"][-1], flush=True)
        report["gpu_peak_mb"] = round(torch.cuda.max_memory_allocated() / 2**20, 1)
    if args.out:
        args.out.write_text(json.dumps(report, indent=2), encoding="utf-8")
    return report


if __name__ == "__main__":
    main()
