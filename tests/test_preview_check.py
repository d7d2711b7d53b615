"""bench/preview_check.py: paragraphs of /ranking/preview items, and recall over them as the eval counts."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.evaluation.retrieval_eval import EvalQuestion  # noqa: E402
from app.evaluation.retrieval_eval import recall_at as recall  # noqa: E402
from bench.preview_check import paragraphs, support_keys  # noqa: E402
from ingest.chunk import chunk_id  # noqa: E402
from ingest.load import record_doc_id  # noqa: E402


def test_items_become_distinct_paragraphs_in_order() -> None:
    a, b = record_doc_id("A", "alpha"), record_doc_id("B", "beta")
    items = [{"id": chunk_id(a, 0, "f" * 40), "title": "A"}, {"id": chunk_id(a, 1, "e" * 40), "title": "A"},
             {"id": chunk_id(b, 0, "d" * 40), "title": None}]
    assert paragraphs(items) == [(a, "A"), (b, "")]


def test_recall_by_title_or_by_doc_id() -> None:
    a, b = record_doc_id("T", "first"), record_doc_id("T", "second")
    titled = EvalQuestion("q", "?", ["T", "U"])
    assert support_keys(titled) == {"title:T", "title:U"}
    ranked = [(a, "T"), ("doc-x", "V"), ("doc-y", "U")]
    assert recall(ranked, support_keys(titled), 2) == 0.5 and recall(ranked, support_keys(titled), 5) == 1.0
    musique = EvalQuestion("q", "?", ["T"], ["second"])  # paragraphs share a title: the text decides
    assert support_keys(musique) == {b}
    assert recall(ranked, {b}, 5) == 0.0 and recall([(b, "T")], {b}, 1) == 1.0
    assert recall(ranked, set(), 2) == pytest.approx(0.0)
