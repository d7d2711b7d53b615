"""Precision of the duplicate-entity proposals (GET /entities/duplicates) on a hand-labelled sample.

Run: .venv/bin/python bench/entity_duplicates.py [--json-out F]
Ingests tests/fixtures/entities/hotpot_corpus_300.json (300 HotpotQA paragraphs, heuristic entities) into a
fresh embedded FalkorDB graph, asks for every proposal (min_score 0), and scores three rankings of the
same candidates against tests/fixtures/entities/duplicate_labels.json (pairs labelled by hand):
name similarity alone, the a-priori weights 0.5/0.2/0.3 and the served weights (name / name embedding /
context), plus the 2-fold cross-validation that chose the served weights.
Reports precision@k over labelled pairs (unlabelled pairs in a top k are counted and shown, never guessed)
and precision / labelled recall at score thresholds. See docs/BENCHMARKS.md, "Duplicate entities".
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from app.core.config import Settings  # noqa: E402
from app.entities.duplicates import WEIGHT_CONTEXT, WEIGHT_NAME, WEIGHT_NAME_EMBEDDING, propose  # noqa: E402
from app.services.container import build_services  # noqa: E402
from app.store.embedded import EmbeddedServer, free_port  # noqa: E402
from ingest.options import IngestOptions  # noqa: E402
from ingest.pipeline import ingest_path  # noqa: E402

FIXTURES = ROOT / "tests" / "fixtures" / "entities"
KS = (10, 25, 50, 100, 150)
THRESHOLDS = (0.9, 0.85, 0.8, 0.75, 0.7, 0.65, 0.6)


def rankings(pairs: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    def ranked(key: Any) -> list[dict[str, Any]]:
        return sorted(pairs, key=lambda p: (-key(p), p["a"]["id"], p["b"]["id"]))

    return {
        "name only": ranked(lambda p: p["evidence"]["name"]),
        "0.5/0.2/0.3 (a priori)": ranked(lambda p: weighted(p, (0.5, 0.2, 0.3))),
        f"served {WEIGHT_NAME}/{WEIGHT_NAME_EMBEDDING}/{WEIGHT_CONTEXT}": ranked(lambda p: p["score"]),
    }


GRID = [
    (n / 10, e / 10, round(1 - n / 10 - e / 10, 2)) for n in range(4, 11) for e in range(0, 4) if n + e <= 10
]


def weighted(p: dict[str, Any], w: tuple[float, float, float]) -> float:
    ev = p["evidence"]
    return w[0] * ev["name"] + w[1] * max(0.0, ev["name_embedding"]) + w[2] * max(0.0, ev["context"])


def cross_validate(pairs: list[dict[str, Any]], labels: dict[frozenset[str], bool], k: int = 50) -> list[Any]:
    """2-fold choice of (name, name embedding, context) weights by precision@k on the labelled pairs:
    the weights best on one half, and their precision@k on the other half."""
    import random

    known = [p for p in pairs if label_of(labels, p) is not None]
    random.Random(0).shuffle(known)
    halves = [known[: len(known) // 2], known[len(known) // 2 :]]

    def prec(part: list[dict[str, Any]], w: tuple[float, float, float]) -> float:
        top = sorted(part, key=lambda p: -weighted(p, w))[:k]
        return sum(bool(label_of(labels, p)) for p in top) / max(1, len(top))

    out = []
    for train, test in (halves, halves[::-1]):
        best = max(GRID, key=lambda w: (prec(train, w), -GRID.index(w)))
        out.append(
            {
                "weights": best,
                "train_precision": round(prec(train, best), 3),
                "test_precision": round(prec(test, best), 3),
                "k": k,
                "test_precision_name_only": round(prec(test, (1.0, 0.0, 0.0)), 3),
                "test_precision_0.5/0.2/0.3": round(prec(test, (0.5, 0.2, 0.3)), 3),
            }
        )
    return out


def label_of(labels: dict[frozenset[str], bool], p: dict[str, Any]) -> bool | None:
    return labels.get(frozenset((p["a"]["id"], p["b"]["id"])))


def precision_at(ranked: list[dict[str, Any]], labels: dict[frozenset[str], bool], k: int) -> dict[str, Any]:
    top = [label_of(labels, p) for p in ranked[:k]]
    known = [t for t in top if t is not None]
    return {
        "k": k,
        "precision": round(sum(known) / len(known), 3) if known else None,
        "labelled": len(known),
        "unlabelled": len(top) - len(known),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--json-out", type=Path)
    args = parser.parse_args()
    labelled = json.loads((FIXTURES / "duplicate_labels.json").read_text(encoding="utf-8"))["pairs"]
    labels = {frozenset((x["a"], x["b"])): bool(x["duplicate"]) for x in labelled}
    with tempfile.TemporaryDirectory() as tmp:
        port = free_port()
        server = EmbeddedServer(Path(tmp) / "db", port=port)
        server.start()
        try:
            settings = Settings(
                falkor_data_dir=Path(tmp) / "db",
                falkor_port=port,
                graph_name="dups",
                llm_base_url=None,
                embedding_query_precision="fp32",
            )
            services = build_services(settings, start_embedded=False)
            ingest_path(
                services,
                FIXTURES / "hotpot_corpus_300.json",
                IngestOptions(llm_relations=False, checkpoint=False),
            )
            t0 = time.perf_counter()
            cold = propose(services, min_score=0.0, limit=500)
            cold_s = time.perf_counter() - t0
            t0 = time.perf_counter()
            body = propose(services, min_score=0.0, limit=500)
            warm_s = time.perf_counter() - t0
            services.close()
        finally:
            server.stop()
    assert cold["pairs"] == body["pairs"]
    pairs = body["pairs"]
    report: dict[str, Any] = {
        "entities": body["entities_compared"],
        "candidates": body["candidates"],
        "proposals": len(pairs),
        "labelled_pairs": len(labels),
        "labelled_duplicates": sum(labels.values()),
        "seconds_cold": round(cold_s, 1),
        "seconds_warm": round(warm_s, 1),
        "rankings": {},
    }
    for name, ranked in rankings(pairs).items():
        report["rankings"][name] = [precision_at(ranked, labels, k) for k in KS]
    report["weights_cv"] = cross_validate(pairs, labels)
    found = {frozenset((p["a"]["id"], p["b"]["id"])): p["score"] for p in pairs}
    positives = sum(labels.values())
    report["thresholds"] = []
    for th in THRESHOLDS:
        kept = [key for key, score in found.items() if score >= th]
        known = [labels[k] for k in kept if k in labels]
        report["thresholds"].append(
            {
                "min_score": th,
                "proposed": len(kept),
                "labelled": len(known),
                "precision": round(sum(known) / len(known), 3) if known else None,
                "labelled_recall": round(sum(known) / positives, 3) if positives else None,
            }
        )
    print(json.dumps(report, indent=1))
    if args.json_out:
        args.json_out.write_text(json.dumps(report, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
