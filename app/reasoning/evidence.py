"""CONVINSE-style evidence retrieval and scoring (CONTRACTS.md §5) over NeoRAG's KG triples and text chunks.

An evidence is ``{evidence_text, source, disambiguations, wikidata_entities, retrieved_for_entity}``.
KB facts verbalise a triple by joining labels with ", "; text evidences are prefixed with their document
title. All evidences are BM25-scored against the question; those mentioning exactly one entity or more than
ten are dropped; the top-e are kept.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from app.reasoning.text import bm25_rank

Triple = tuple[str, str, str]
SOURCES = ("kb", "text")
MAX_ENTITIES = 10


class EvidenceBackend(Protocol):
    """Where evidences come from (NeoRAG's store in production, in-memory data in unit tests)."""

    def link(self, question: str) -> list[str]:
        """KG entity names mentioned in the question."""

    def triples_around(self, entity: str) -> list[Triple]:
        """Triples with ``entity`` as head or tail."""

    def passages(self, query: str, k: int) -> list[dict[str, Any]]:
        """Text chunks ``{id, contents, title, entities: [{id, label}]}``, best first."""


def entity_label(name: str) -> str:
    """A readable label for a KG name: underscores as spaces (``united_kingdom`` -> ``united kingdom``)."""
    return name.replace("_", " ").strip()


def relation_label(relation: str) -> str:
    """A readable relation: the last dotted segment of a Freebase id, underscores as spaces."""
    return relation.rsplit(".", 1)[-1].replace("_", " ").strip()


def kb_evidence(triple: Triple, for_entity: str) -> dict[str, Any]:
    """One KB fact in CONVINSE's format."""
    h, r, t = triple
    ents = list(dict.fromkeys([h, t]))
    return {
        "evidence_text": ", ".join([entity_label(h), relation_label(r), entity_label(t)]),
        "source": "kb",
        "disambiguations": [[entity_label(e), e] for e in ents],
        "wikidata_entities": [{"id": e, "label": entity_label(e)} for e in ents],
        "retrieved_for_entity": {"id": for_entity, "label": entity_label(for_entity)},
    }


def text_evidence(passage: dict[str, Any], linked: Sequence[str] = ()) -> dict[str, Any]:
    """One text chunk in CONVINSE's format, prefixed with its document title."""
    title = str(passage.get("title") or "").strip()
    contents = " ".join(str(passage.get("contents") or passage.get("text") or "").split())
    text = f"{title}, {contents}" if title else contents
    entities: list[dict[str, str]] = []
    for ent in passage.get("entities") or []:
        eid, lab = str(ent.get("id", "")), str(ent.get("label") or ent.get("name") or ent.get("id", ""))
        if eid and all(e["id"] != eid for e in entities):
            entities.append({"id": eid, "label": lab})
    lowered = text.lower()
    for name in linked:  # question entities whose label occurs in the text count as mentioned too
        if entity_label(name).lower() in lowered and all(e["id"] != name for e in entities):
            entities.append({"id": name, "label": entity_label(name)})
    doc = str(passage.get("doc_id") or title or passage.get("id", ""))
    return {
        "evidence_text": text,
        "source": "text",
        "disambiguations": [[e["label"], e["id"]] for e in entities],
        "wikidata_entities": entities,
        "retrieved_for_entity": {"id": doc, "label": title or doc},
    }


def keep_evidence(evidence: dict[str, Any]) -> bool:
    """CONVINSE's filter: drop evidences that mention exactly one entity or more than ten."""
    n = len({e["id"] for e in evidence["wikidata_entities"]})
    return n != 1 and n <= MAX_ENTITIES


def top_evidences(
    query: str, evidences: list[dict[str, Any]], max_evidences: int
) -> list[tuple[dict[str, Any], float]]:
    """Filter, de-duplicate by text and keep the top-e by BM25 over ``evidence_text``."""
    unique: dict[str, dict[str, Any]] = {}
    for ev in evidences:
        if keep_evidence(ev):
            unique.setdefault(ev["evidence_text"], ev)
    pool = list(unique.values())
    ranked = bm25_rank(query, [ev["evidence_text"] for ev in pool])
    return [(pool[i], score) for i, score in ranked[:max_evidences]]


def retrieve_evidences(
    backend: EvidenceBackend,
    query: str,
    sources: Sequence[str] = SOURCES,
    max_evidences: int = 100,
    text_k: int | None = None,
) -> list[tuple[dict[str, Any], float]]:
    """Gather KB facts and text chunks for ``query`` and return the scored top-e."""
    linked = backend.link(query)
    evidences: list[dict[str, Any]] = []
    if "kb" in sources:
        for entity in linked:
            evidences.extend(kb_evidence(t, entity) for t in backend.triples_around(entity))
    if "text" in sources:
        k = text_k or max(10, min(max_evidences, 50))
        evidences.extend(text_evidence(p, linked) for p in backend.passages(query, k))
    return top_evidences(query, evidences, max_evidences)
