"""What the KG explorer shows besides the /retrieve calls: sample ids and a sample's question (no HTTP)."""

from __future__ import annotations

from typing import Any

from app.core.errors import BadInput
from app.kg.graph import get_sample
from app.store.base import GraphStore

MAX_SAMPLE_IDS = 200


def _name(value: str | None, field: str) -> str:
    text = (value or "").strip()
    if not text:
        raise BadInput(f"{field}: required", field=field)
    if len(text) > 200:
        raise BadInput(f"{field}: at most 200 characters", field=field)
    return text


def sample_ids(store: GraphStore, dataset: str, prefix: str = "", limit: int = 50) -> list[dict[str, Any]]:
    """Sample ids of ``dataset`` starting with ``prefix``: ``[{sample_id, n_triples}]``, sorted."""
    if not 1 <= limit <= MAX_SAMPLE_IDS:
        raise BadInput(f"limit: between 1 and {MAX_SAMPLE_IDS}", field="limit")
    rows = store.run("ui_kg_sample_ids", {"dataset": _name(dataset, "dataset"), "prefix": prefix.strip(),
                                          "limit": limit})
    return [{"sample_id": r["sample_id"], "n_triples": r.get("n_triples")} for r in rows]


def sample_info(store: GraphStore, dataset: str, sample_id: str) -> dict[str, Any] | None:
    """A sample's question, answers, topic (q_entity) and answer (a_entity) entities; None when absent."""
    row = get_sample(store, _name(dataset, "dataset"), _name(sample_id, "sample_id"))
    if row is None:
        return None
    return {k: row.get(k) for k in ("dataset", "sample_id", "question", "answers", "q_entity", "a_entity",
                                    "n_triples")}
