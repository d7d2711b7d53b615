"""CONVINSE evidence format, filter and top-e ranking on in-memory sources."""

from __future__ import annotations

from typing import Any

from app.reasoning.evidence import kb_evidence, keep_evidence, retrieve_evidences, text_evidence

KEYS = {"evidence_text", "source", "disambiguations", "wikidata_entities", "retrieved_for_entity"}


class Backend:
    def __init__(self) -> None:
        self.triples = [
            ("frederica", "people.person.spouse", "ernest_augustus"),
            ("ernest_augustus", "nationality", "united_kingdom"),
            ("frederica", "gender", "frederica"),
        ]

    def link(self, question: str) -> list[str]:
        return [e for e in ("frederica", "ernest_augustus") if e in question]

    def triples_around(self, entity: str) -> list[tuple[str, str, str]]:
        return [t for t in self.triples if entity in (t[0], t[2])]

    def passages(self, query: str, k: int) -> list[dict[str, Any]]:
        crowd = [{"id": f"e{i}", "label": f"E{i}"} for i in range(11)]
        return [
            {
                "id": "c1",
                "title": "Ernest Augustus",
                "contents": "Ernest Augustus married frederica.",
                "entities": [{"id": "ernest augustus", "label": "Ernest Augustus"}],
            },
            {"id": "c2", "title": "Crowd", "contents": "Many names.", "entities": crowd},
            {"id": "c3", "title": "Lonely", "contents": "Only one.", "entities": [{"id": "x", "label": "X"}]},
        ][:k]


def test_kb_evidence_format() -> None:
    ev = kb_evidence(("frederica", "people.person.spouse", "ernest_augustus"), "frederica")
    assert set(ev) == KEYS
    assert ev["evidence_text"] == "frederica, spouse, ernest augustus"
    assert ev["source"] == "kb"
    assert ev["disambiguations"] == [["frederica", "frederica"], ["ernest augustus", "ernest_augustus"]]
    assert ev["wikidata_entities"][1] == {"id": "ernest_augustus", "label": "ernest augustus"}
    assert ev["retrieved_for_entity"] == {"id": "frederica", "label": "frederica"}


def test_text_evidence_prefixed_with_title_and_counts_linked_entities() -> None:
    ev = text_evidence(
        {
            "id": "c1",
            "title": "Ernest Augustus",
            "contents": "He married  frederica.",
            "entities": [{"id": "ernest augustus", "name": "Ernest Augustus"}],
        },
        ["frederica"],
    )
    assert set(ev) == KEYS and ev["source"] == "text"
    assert ev["evidence_text"] == "Ernest Augustus, He married frederica."
    assert [e["id"] for e in ev["wikidata_entities"]] == ["ernest augustus", "frederica"]
    assert ev["retrieved_for_entity"] == {"id": "Ernest Augustus", "label": "Ernest Augustus"}


def test_filter_drops_one_entity_and_more_than_ten() -> None:
    assert not keep_evidence(kb_evidence(("a", "r", "a"), "a"))
    assert keep_evidence(kb_evidence(("a", "r", "b"), "a"))
    many = {"wikidata_entities": [{"id": str(i), "label": str(i)} for i in range(11)]}
    ten = {"wikidata_entities": [{"id": str(i), "label": str(i)} for i in range(10)]}
    assert not keep_evidence(many) and keep_evidence(ten)


def test_retrieve_ranks_filters_and_cuts_to_top_e() -> None:
    backend = Backend()
    q = "what nationality is frederica 's spouse ernest_augustus ?"
    got = retrieve_evidences(backend, q, ["kb", "text"], max_evidences=100)
    texts = [ev["evidence_text"] for ev, _ in got]
    assert "frederica, gender, frederica" not in texts  # one entity
    assert not any(t.startswith("Crowd") or t.startswith("Lonely") for t in texts)  # >10 / one entity
    assert "Ernest Augustus, Ernest Augustus married frederica." in texts
    assert texts.count("frederica, spouse, ernest augustus") == 1  # de-duplicated across linked entities
    assert [s for _, s in got] == sorted((s for _, s in got), reverse=True)
    assert texts[0] == "frederica, spouse, ernest augustus"  # matches 4 query words, more than any other
    assert len(retrieve_evidences(backend, q, ["kb"], max_evidences=1)) == 1
    assert all(ev["source"] == "kb" for ev, _ in retrieve_evidences(backend, q, ["kb"]))
