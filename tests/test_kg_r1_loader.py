"""KG-R1's own data layout (entities*.txt, relations.txt, *_simple.json): the reader and the load."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from app.cli import cli
from app.core.config import Settings
from app.core.errors import BadInput
from app.kg.facts import decode_facts
from app.kg.graph import get_sample, list_datasets
from app.store.base import GraphStore
from ingest.kg import kgr1
from ingest.kg.loader import load_path
from ingest.kg.readers import read_records
from tests.support.backends import Backend

DATA = Path(__file__).parent / "fixtures" / "kg_r1_golden" / "data_kg"


def write_layout(folder: Path, entities: list[str], relations: list[str], splits: dict[str, list[object]],
                 names: list[str] | None = None) -> Path:
    folder.mkdir(parents=True)
    (folder / "entities.txt").write_text("".join(f"{e}\n" for e in entities), encoding="utf-8")
    if names is not None:
        (folder / "entities_text.txt").write_text("".join(f"{n}\n" for n in names), encoding="utf-8")
    (folder / "relations.txt").write_text("".join(f"{r}\n" for r in relations), encoding="utf-8")
    for split, rows in splits.items():
        text = "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows)
        (folder / f"{split}_simple.json").write_text(text, encoding="utf-8")
    return folder


def row(sid: object, tuples: list[list[object]], members: list[int], **extra: object) -> dict[str, object]:
    return {"id": sid, "answers": [{"kb_id": "m.02", "text": "Ottawa"}], "entities": [0],
            "subgraph": {"tuples": tuples, "entities": members}, **extra}


def test_reader_follows_kg_r1_s_server(tmp_path: Path) -> None:
    folder = write_layout(
        tmp_path / "webqsp",
        entities=["m.00", "", "  m.01 ", "m.02", "m.03"],  # a blank line is dropped, lines are stripped
        names=["Canada", "", " canada", "Ottawa", "Ottawa"],  # two entries carry the name "Ottawa"
        relations=["location.country.capital", "", "common.topic.alias"],
        splits={
            "train": [row("s1", [[0, 0, 2], [1, 0, 3], [0, 1, 1], [0, 0, 9], [0, 5, 1], ["x", 0, 1]],
                          [0, 1, 2, 3]),
                      "{not json", row("", [[0, 0, 2]], [0]), row("s2", [[0, 0, 2]], [0, 2]), ""],
            "test": [row("s2", [[1, 1, 0]], [0, 1], question="what is the capital")],
        })
    source = kgr1.open_source(folder)
    assert source.entities == ["Canada", "canada", "Ottawa", "Ottawa"] and not source.uses_mids
    assert source.relations == ["location.country.capital", "common.topic.alias"]
    records = list(source.records())
    assert [r.sample_id for r in records] == ["s2", "s1", "s2"]  # test first: the loader keeps the first
    s2, s1 = records[0], records[1]
    assert s2.triples == [("canada", "common.topic.alias", "Canada")] and s2.split == "test"
    assert s2.question == "what is the capital" and s2.answers == ["Ottawa"]
    assert s1.triples == [("Canada", "location.country.capital", "Ottawa"),
                          ("canada", "location.country.capital", "Ottawa"),
                          ("Canada", "common.topic.alias", "canada")]
    assert source.skipped_tuples == 3 and source.skipped_lines == 1  # out of range, not ints; bad JSON
    assert s1.q_entity == ["Canada"] and s1.split == "train"
    extra = s1.extra
    assert extra is not None and extra.isolated == [] and extra.hidden == set()
    assert extra.repeats_out == {("canada", "location.country.capital", "Ottawa"): 2}  # the union of both
    mids = kgr1.open_source(folder, "mid")
    assert mids.uses_mids and next(r for r in mids.records() if r.sample_id == "s1").triples[0] == (
        "m.00", "location.country.capital", "m.02")
    assert next(mids.records()).answers == ["m.02"]


def test_isolated_and_hidden_entities(tmp_path: Path) -> None:
    folder = write_layout(tmp_path / "d", entities=["a", "b", "c", "d"], relations=["r"],
                          splits={"train": [row("s", [[0, 0, 1], [2, 0, 1]], [0, 1, 3])]})
    record = next(kgr1.open_source(folder).records())
    assert record.extra is not None
    assert record.extra.isolated == ["d"] and record.extra.hidden == {"c"}  # c: in a tuple, not in the list


def test_layout_detection_splits_and_errors(tmp_path: Path) -> None:
    assert kgr1.find_folder(DATA, "cwq") == DATA / "CWQ"  # a child differing only in case
    assert kgr1.find_folder(DATA / "webqsp", "anything") == DATA / "webqsp"  # the folder itself
    assert kgr1.find_folder(tmp_path, "webqsp") is None
    folder = write_layout(tmp_path / "cwq", entities=["a", "b"], relations=["r"],
                          splits={"train": [row("t", [[0, 0, 1]], [0, 1])],
                                  "dev": [row("d", [[1, 0, 0]], [0, 1])]})
    assert [r.sample_id for r in kgr1.open_source(folder).records()] == ["t"]  # train + test by default
    assert [r.sample_id for r in kgr1.open_source(folder, split="dev").records()] == ["d"]
    assert [r.triples for r in kgr1.open_source(folder, "auto").records()] == [[("a", "r", "b")]]  # MIDs
    with pytest.raises(BadInput, match="entities_text.txt not found"):
        kgr1.open_source(folder, "text")
    with pytest.raises(BadInput, match="no test_simple.json"):
        kgr1.open_source(folder, split="test")
    with pytest.raises(BadInput, match="entity names must be one of"):
        kgr1.open_source(folder, "names")
    assert [r.sample_id for r in read_records(tmp_path, "cwq")] == ["t"]  # through the generic reader too


def test_load_stores_samples_splits_and_the_relation_vocabulary(store: GraphStore) -> None:
    report = load_path(store, DATA, "webqsp")
    assert report.samples_loaded == 11 and report.samples_skipped == 1  # WebQTrn-5 is in both splits
    assert get_sample(store, "webqsp", "WebQTrn-5")["n_triples"] == 1
    buckets = store.run("kg_facts_by_sample", {"samples": ["webqsp/WebQTrn-5"]})
    names = sorted(name for b in buckets for name in decode_facts(b["facts"]))
    assert names == ["Female", "New Sample Entity"]  # the test split's sample
    assert get_sample(store, "webqsp", "WebQTest-0")["n_triples"] == 5  # the test split
    vocab = store.run("kg_dataset_vocab_get", {"names": ["webqsp"]})[0]["relations"]
    relations = (DATA / "webqsp" / "relations.txt").read_text(encoding="utf-8").split()
    assert vocab == sorted(relations) and "film.film.sequel" in vocab  # in the vocabulary, in no sample
    load_path(store, DATA, "cwq")
    assert [r["name"] for r in store.run("kg_dataset_names")] == ["webqsp", "cwq"]  # load order
    assert {d["name"]: d["samples"] for d in list_datasets(store)} == {"webqsp": 11, "cwq": 1}


def test_cli_loads_a_kg_r1_folder_with_mids(settings: Settings, store: GraphStore, backend: Backend,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in backend.env(settings).items():
        monkeypatch.setenv(key, value)
    runner = CliRunner()
    done = runner.invoke(cli, ["kg", "load", str(DATA), "--dataset", "webqsp", "--entity-names", "mid"])
    assert done.exit_code == 0, done.output
    assert "11 samples loaded" in done.output and "1 skipped" in done.output
    assert get_sample(store, "webqsp", "WebQTrn-0")["q_entity"] == ["m.00000q"]
    bad = runner.invoke(cli, ["kg", "load", str(DATA), "--dataset", "webqsp", "--entity-names", "names"])
    assert bad.exit_code != 0 and "entity names must be one of" in str(bad.exception)
