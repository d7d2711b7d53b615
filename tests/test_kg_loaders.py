"""KG loaders: content detection, RoG parquet/JSON/JSONL, subgraph dirs, PathQuestion -> RoG, store writes."""

from __future__ import annotations

import gc
import json
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from app.core.errors import BadInput
from app.kg.graph import get_relations, get_sample, get_triples, list_datasets
from app.store.base import GraphStore
from ingest.kg.loader import load_path, load_records
from ingest.kg.pathquestion import neighbourhood, parse_answers, parse_path, read_kb, read_pathquestion
from ingest.kg.readers import read_records
from ingest.kg.records import KGRecord
from tests.support.ingest_graph import q
from tests.support.kg import PQ, ROG

ROW = {"id": "WebQTest-7", "question": "what did james k polk do before he was president",
       "answer": ["Lawyer", "Farmer"], "q_entity": ["James K. Polk"], "a_entity": ["Lawyer"],
       "graph": [["James K. Polk", "people.person.profession", "Lawyer"],
                 ["James K. Polk", "people.person.profession", "Farmer"],
                 ["James K. Polk", "people.person.profession", "Lawyer"]], "choices": []}


def test_pathquestion_parsing_and_neighbourhood_hold_the_gold_path() -> None:
    assert parse_path("a#r1#b#r2#c#<end>#c") == [("a", "r1", "b"), ("b", "r2", "c")]
    assert parse_answers("male(male/female/)") == ["male", "female"]
    assert parse_answers("x") == ["x"]
    records = list(read_pathquestion(PQ / "PQ-2H.txt"))
    assert len(records) == 1908 and records[0].sample_id == "PQ-2H-0"
    first = records[0]
    assert first.q_entity == ["frederica_of_mecklenburg-strelitz"] and first.a_entity == ["united_kingdom"]
    assert ("frederica_of_mecklenburg-strelitz", "spouse", "ernest_augustus_i_of_hanover") in first.triples
    kb = set(read_kb(PQ / "2H-kb.txt"))
    assert all(set(r.triples) <= kb for r in records[:50])
    adjacency: dict[str, list[tuple[str, str, str]]] = {}
    for t in kb:
        adjacency.setdefault(t[0], []).append(t)
        adjacency.setdefault(t[2], []).append(t)
    assert neighbourhood(adjacency, "nobody", 2) == set()


def test_rog_json_jsonl_parquet_and_subgraph_layouts(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_text(json.dumps([ROW]))
    (tmp_path / "b.jsonl").write_text(json.dumps(ROW) + "\n\n" + json.dumps({**ROW, "id": "x2"}) + "\n")
    pq.write_table(pa.Table.from_pylist([ROW, {**ROW, "id": "p2"}]), tmp_path / "train-00000.parquet")
    (tmp_path / "one.json").write_text(json.dumps({"triples": [["a", "r", "b"], ["bad"]]}))
    for name, ids in [("a.json", ["WebQTest-7"]), ("b.jsonl", ["WebQTest-7", "x2"]),
                      ("train-00000.parquet", ["WebQTest-7", "p2"]), ("one.json", ["one"])]:
        assert [r.sample_id for r in read_records(tmp_path / name, "webqsp")] == ids
    rec = next(read_records(tmp_path / "train-00000.parquet", "webqsp"))
    assert rec.answers == ["Lawyer", "Farmer"] and len(rec.triples) == 3
    assert next(read_records(tmp_path / "one.json", "d")).triples == [("a", "r", "b")]
    hf = tmp_path / "hf" / "data"
    hf.mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist([ROW]), hf / "train-00000-of-00001.parquet")
    pq.write_table(pa.Table.from_pylist([{**ROW, "id": "t1"}]), hf / "test-00000-of-00001.parquet")
    assert [r.sample_id for r in read_records(tmp_path / "hf", "webqsp", split="test")] == ["t1"]
    ids = sorted(r.sample_id for r in read_records(ROG, "webqsp"))
    assert ids == ["WebQTrn-0", "WebQTrn-1", "WebQTrn-2"]
    assert sorted(r.sample_id for r in read_records(ROG / "webqsp" / "subgraphs", "x")) == ids


def test_unreadable_inputs_name_the_problem(tmp_path: Path) -> None:
    (tmp_path / "x.csv").write_text("a,b,c\n")
    (tmp_path / "bad.json").write_text("{nope")
    (tmp_path / "empty").mkdir()
    with pytest.raises(BadInput, match="cannot tell what x.csv holds"):
        list(read_records(tmp_path / "x.csv", "d"))
    with pytest.raises(BadInput, match="bad.json is not JSON"):
        list(read_records(tmp_path / "bad.json", "d"))
    with pytest.raises(BadInput, match="no subgraphs"):
        list(read_records(tmp_path / "empty", "d"))
    with pytest.raises(BadInput, match="does not exist"):
        list(read_records(tmp_path / "missing.json", "d"))
    with pytest.raises(ValueError, match="no 'id'"):
        KGRecord.from_rog({"graph": []})
    q = tmp_path / "PQ-9H.txt"
    q.write_text("q ?\ta(a/)\th#r#a#<end>#a\n")
    with pytest.raises(BadInput, match="KB .*9H-kb.txt not found"):
        list(read_records(q, "d"))


def test_load_is_idempotent_replace_swaps_and_whole_graph_is_refcounted(store: GraphStore) -> None:
    rep = load_records(store, "d", [KGRecord.from_rog(ROW), KGRecord("s2", [("James K. Polk", "r", "X")])])
    assert (rep.samples_loaded, rep.triples, rep.duplicates_collapsed) == (2, 3, 1)
    again = load_records(store, "d", [KGRecord.from_rog(ROW)])
    assert (again.samples_loaded, again.samples_skipped, again.triples) == (0, 1, 0)
    assert list_datasets(store) == [{"name": "d", "samples": 2, "triples": 3}]
    counts = store.run("count_nodes_by_label")
    assert counts  # statement exists and runs
    whole = get_triples(store, "d", None, "james k. polk")
    assert whole == [("James K. Polk", "people.person.profession", "Farmer"),
                     ("James K. Polk", "people.person.profession", "Lawyer"), ("James K. Polk", "r", "X")]
    assert get_relations(store, "d", "WebQTest-7", "James K. Polk") == ["people.person.profession"]
    sample = get_sample(store, "d", "WebQTest-7")
    assert sample is not None and sample["answers"] == ["Lawyer", "Farmer"] and sample["n_triples"] == 2
    swapped = load_records(store, "d", [KGRecord("WebQTest-7", [("James K. Polk", "r", "X")])], replace=True)
    assert (swapped.samples_replaced, swapped.triples) == (1, 1)
    assert get_triples(store, "d", None, "James K. Polk") == [("James K. Polk", "r", "X")]
    rel = store.run("kg_graph_triples", {"key": "d/James K. Polk", "relations": ["r"]})
    assert len(rel) == 1
    samples_on_edge = q(store, "MATCH ()-[r:KG_REL {relation: 'r'}]->() RETURN r.samples AS n")
    assert samples_on_edge == [{"n": 2}]  # the refcount itself
    assert list_datasets(store) == [{"name": "d", "samples": 2, "triples": 2}]
    with pytest.raises(BadInput, match="dataset"):
        load_records(store, "a/b", [])


def test_whole_graph_edges_join_the_right_entities_when_old_and_new_mix_in_one_batch(
        store: GraphStore) -> None:
    """kg_rel_create / kg_rel_merge_at bind edges by position: edges between existing entities (MERGE) and
    edges touching new ones (CREATE) mix in one chunk; FalkorDB emits rows in another order; each edge joins
    its own ends, and an edge already in the graph is counted, never duplicated."""
    first = [(f"old{i}", "r", f"old{i + 1}") for i in range(0, 20, 2)]
    load_records(store, "d", [KGRecord("a", first)])
    second = [(f"new{i}", f"p{i % 3}", f"old{i}") for i in range(20)] + [("old3", "self", "old3"), first[0]]
    load_records(store, "d", [KGRecord("b", second)])
    rows = [tuple(r.values()) for r in q(  # the whole-graph edges themselves
        store, "MATCH (h:KGEntity)-[r:KG_REL]->(t:KGEntity) RETURN h.name, r.relation, t.name, r.samples")]
    expected = {t: 1 for t in first + second}
    expected[first[0]] = 2
    assert {(h, r, t): n for h, r, t, n in rows} == expected and len(rows) == len(expected)
    props = q(store, "MATCH ()-[r:KG_REL]->() RETURN DISTINCT keys(r) AS k")  # no redundant r.dataset
    assert {tuple(sorted(row["k"])) for row in props} == {("relation", "samples")}
    names = [tuple(r.values()) for r in q(store, "MATCH (e:KGEntity) RETURN e.key, e.lkey, e.name")]
    assert len(names) == len({x for t in expected for x in (t[0], t[2])})
    assert all(k == f"d/{n}" and lk == f"d/{n.lower()}" for k, lk, n in names)


def test_load_path_on_pathquestion_reports_progress(store: GraphStore) -> None:
    seen: list[tuple[int, int]] = []
    rep = load_path(store, PQ / "PQ-3H.txt", "pq3h", progress=lambda s, t: seen.append((s, t)))
    assert rep.samples_loaded == 300 and rep.triples > 0 and rep.triples_per_s > 0
    assert seen[-1] == (300, rep.triples) and len(seen) >= 2


def test_a_load_keeps_what_it_has_built_out_of_the_collectors_passes(store: GraphStore,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The loader's growing structures (entities, edges written) are frozen from the start and at each chunk
    (app.core.gc_freeze); else every full collection walked them and a triple cost more as the graph grew.
    The freezes are counted, not the frozen objects: objects of earlier tests die during the load too."""
    from app.core import gc_freeze

    calls: list[str] = []

    class CountingGc:
        def freeze(self) -> None:
            calls.append("freeze")
            gc.freeze()

        def unfreeze(self) -> None:
            calls.append("unfreeze")
            gc.unfreeze()

    monkeypatch.setattr(gc_freeze, "gc", CountingGc())
    freezes_at_record: list[int] = []

    def records() -> Iterator[KGRecord]:
        for i in range(450):  # three chunks of at most 200 samples
            freezes_at_record.append(calls.count("freeze"))
            yield KGRecord(f"s{i}", [(f"e{i}", "r", f"e{i + 1}"), (f"e{i}", "q", "hub")])

    report = load_records(store, "d", records())
    assert report.samples_loaded == 450 and report.triples == 900
    assert freezes_at_record[0] >= 1  # frozen before the first record
    assert freezes_at_record[-1] >= freezes_at_record[0] + 2  # and again at each chunk boundary
    assert calls.count("unfreeze") == 1 and calls[-1] == "unfreeze"  # handed back at the end


def test_in_process_api_sample_scope_vs_whole_graph(store: GraphStore) -> None:
    from app.kg.graph import StoreKGView, find_entities, get_head_entities, get_tail_entities, resolve_entity

    load_path(store, ROG, "webqsp")
    assert find_entities(store, "webqsp", "JUSTIN BIEBER") == ["Justin Bieber", "justin bieber"]
    assert find_entities(store, "webqsp", "justin bieber") == ["justin bieber"]
    assert get_tail_entities(store, "webqsp", "WebQTrn-1", "Justin Bieber", "music.artist.album") == []
    assert get_tail_entities(store, "webqsp", None, "Justin Bieber", "music.artist.label") == [
        "Island Records"]
    assert get_head_entities(store, "webqsp", "WebQTrn-0", "jeremy bieber", "people.person.parents") == [
        "Jaxon Bieber", "Justin Bieber"]
    assert resolve_entity(store, "webqsp", "  CANADA ", "WebQTrn-1") == "Canada"
    assert resolve_entity(store, "webqsp", "Canada", "WebQTrn-0") is None
    view = StoreKGView(store, "webqsp", "WebQTrn-1")
    assert view.relations("Canada") == [("location.country.capital", "out"),
                                        ("people.person.nationality", "in")]
    assert view.triples("Canada", "people.person.nationality", "in") == [
        ("Justin Bieber", "people.person.nationality", "Canada")]
    whole = StoreKGView(store, "webqsp")
    assert ("music.artist.album", "out") in whole.relations("Justin Bieber")
    assert ("people.person.nationality", "out") in whole.relations("Justin Bieber")
    one = get_triples(store, "webqsp", None, "Justin Bieber", ["music.artist.album"], limit_per_relation=1)
    assert one == [("Justin Bieber", "music.artist.album", "Believe")]
