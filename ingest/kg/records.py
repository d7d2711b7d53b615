"""The loader's unit: one RoG-shaped sample (question + its subgraph triples)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from app.kg.facts import FactsExtra

Triple = tuple[str, str, str]


@dataclass
class KGRecord:
    """A RoG record: ``{id, question, answer, q_entity, a_entity, graph}``."""

    sample_id: str
    triples: list[Triple]
    question: str = ""
    answers: list[str] = field(default_factory=list)
    q_entity: list[str] = field(default_factory=list)
    a_entity: list[str] = field(default_factory=list)
    split: str | None = None  # overrides the load's --split (a KG-R1 folder holds both splits)
    extra: FactsExtra | None = None  # KG-R1 layout: isolated/hidden entities, repeated names
    origin: str | None = None  # where it was read, e.g. "train.jsonl line 3" (for reports)

    @classmethod
    def from_rog(cls, row: dict[str, Any]) -> KGRecord:
        """Build from a RoG row (HF parquet/JSON field names); bad triples are skipped."""
        sample_id = row.get("id", row.get("sample_id"))
        if sample_id is None or str(sample_id).strip() == "":
            raise ValueError("a RoG record has no 'id'")
        graph = row.get("graph", row.get("triples")) or []
        return cls(
            sample_id=str(sample_id),
            triples=clean_triples(graph),
            question=str(row.get("question") or ""),
            answers=_str_list(row.get("answer", row.get("answers"))),
            q_entity=_str_list(row.get("q_entity")),
            a_entity=_str_list(row.get("a_entity")),
        )


def rog_problem(row: Any) -> str | None:
    """Why a RoG row cannot be loaded whole (strict readers skip such a sample), or None."""
    if not isinstance(row, dict):
        return "not a JSON object"
    sample_id = row.get("id", row.get("sample_id"))
    if sample_id is None or str(sample_id).strip() == "":
        return "no 'id'"
    graph = row.get("graph", row.get("triples")) or []
    if not isinstance(graph, list | tuple):
        return "its graph is not a list of triples"
    for i, item in enumerate(graph):
        if not isinstance(item, list | tuple) or len(item) != 3:
            return f"triple {i} is not 3 values"
        if any(x is None or str(x) == "" for x in item):
            return f"triple {i} has an empty field"
    return None


def _str_list(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    return [str(v) for v in value]


def clean_triples(graph: Any) -> list[Triple]:
    """Triples as 3-tuples of strings; rows that are not 3 non-empty values are dropped."""
    out: list[Triple] = []
    append = out.append
    for item in graph:
        if item is None or len(item) != 3:
            continue
        h, r, t = item
        if type(h) is not str or type(r) is not str or type(t) is not str:  # rare: numbers, None
            h, r, t = str(h), str(r), str(t)
        if h and r and t:
            append((h, r, t))
    return out
