"""bench/gpu_embed.py: document-embedding throughput per device (CPU rows here, CUDA rows with a GPU)."""

from __future__ import annotations

import json
from pathlib import Path

import torch

from bench import gpu_embed


def test_load_texts_reads_strings_and_pool_records(tmp_path: Path) -> None:
    plain = tmp_path / "plain.json"
    plain.write_text(json.dumps(["a b", "c d", "e"]))
    assert gpu_embed.load_texts(plain, 2) == ["a b", "c d"]
    pool = tmp_path / "pool_corpus.json"
    pool.write_text(json.dumps([{"title": "Leland", "text": "A town."}, {"text": "No title."}]))
    assert gpu_embed.load_texts(pool, 0) == ["Leland\nA town.", "No title."]


def test_cpu_rows_time_the_embedder_and_a_gpu_adds_checked_rows(tmp_path: Path) -> None:
    texts = tmp_path / "texts.json"
    texts.write_text(json.dumps([f"Passage {i} about the meeting's budget and design." for i in range(12)]))
    out = tmp_path / "report.json"
    report = gpu_embed.main(["--model", "all-MiniLM-L6-v2", "--texts", str(texts), "--batch-sizes", "4", "8",
                             "--repeats", "1", "--cpu-texts", "6", "--out", str(out)])
    assert json.loads(out.read_text()) == report and report["passages"] == 12
    cpu = [r for r in report["rows"] if r["device"] == "cpu"]
    assert [(r["batch"], r["passages"]) for r in cpu] == [(4, 6), (8, 6)]
    assert all(r["passages_per_s"] > 0 and r["seconds"] > 0 for r in cpu)
    gpu = [r for r in report["rows"] if r["device"] == "cuda"]
    if torch.cuda.is_available():  # a GPU machine: fp32 and fp16 rows, each agreeing with the CPU vectors
        assert [r["dtype"] for r in gpu] == ["fp32", "fp32", "fp16", "fp16"]
        assert all(r["min_cosine_vs_cpu"] > 0.99 for r in gpu)
    else:
        assert gpu == [] and report["gpu"] is None
