"""bench/train_pools.py: train-question pools for `neorag eval retrieval` (issue 24), without a store."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

from app.evaluation.retrieval_eval import load_dataset
from ingest.load import load_file, record_doc_id

ROOT = Path(__file__).resolve().parents[1]
FIX = ROOT / "tests" / "fixtures" / "retrieval"
HOTPOT = FIX / "hotpot_eval" / "hotpotqa_questions.json"  # 6 HotpotQA train records
MUSIQUE = FIX / "musique_train" / "musique_train3.json"  # 3 MuSiQue train records
TWOWIKI = FIX / "twowiki_eval" / "2wikimultihopqa_dev.json"  # 2 records: the reader only, nothing is fitted


def _module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("train_pools", ROOT / "bench" / "train_pools.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    sys.modules["train_pools"] = mod
    spec.loader.exec_module(mod)
    return mod


tp = _module()


def _build(tmp_path: Path, name: str, *args: str) -> tuple[dict, list[dict], list[dict]]:
    out = tmp_path / name
    manifest = tp.main([*args, "--out", str(out)])
    stem = f"{manifest['dataset']}_train_pool"
    questions = json.loads((out / f"{stem}.json").read_text(encoding="utf-8"))
    corpus = json.loads((out / f"{stem}_corpus.json").read_text(encoding="utf-8"))
    return manifest, questions, corpus


def test_hotpot_pool_holds_every_question_paragraph_and_reads_back(tmp_path: Path) -> None:
    manifest, questions, corpus = _build(tmp_path, "hp", "--dataset", "hotpotqa", "--source", str(HOTPOT),
                                         "--questions", "6")
    assert manifest["questions"] == 6 == manifest["fit"] + manifest["held_out"]
    titles = {c["title"] for c in corpus}
    source = json.loads(HOTPOT.read_text(encoding="utf-8"))
    assert titles == {t for r in source for t, _ in r["context"]}
    loaded, corpus_path = load_dataset("hotpotqa", tmp_path / "hp")
    assert corpus_path.name == "hotpotqa_train_pool_corpus.json"
    assert len(loaded) == 6 and all(set(q.support_titles) <= titles and q.support_titles for q in loaded)
    assert manifest["commands"]["held_out"].endswith(f"--reuse --skip {manifest['fit']}")


def test_order_and_split_do_not_depend_on_the_source_order(tmp_path: Path) -> None:
    reversed_src = tmp_path / "rev.json"
    records = json.loads(HOTPOT.read_text(encoding="utf-8"))
    reversed_src.write_text(json.dumps(records[::-1]), encoding="utf-8")
    _, a, ca = _build(tmp_path, "a", "--dataset", "hotpotqa", "--source", str(HOTPOT), "--questions", "6")
    _, b, cb = _build(tmp_path, "b", "--dataset", "hotpotqa", "--source", str(reversed_src),
                      "--questions", "6")
    assert [q["_id"] for q in a] == [q["_id"] for q in b] and ca == cb
    _, c, _ = _build(tmp_path, "c", "--dataset", "hotpotqa", "--source", str(HOTPOT), "--questions", "6",
                     "--seed", "7")
    assert [q["_id"] for q in c] != [q["_id"] for q in a]


def test_a_smaller_pool_keeps_the_same_questions_on_the_same_side(tmp_path: Path) -> None:
    big, qb, _ = _build(tmp_path, "big", "--dataset", "hotpotqa", "--source", str(HOTPOT), "--questions", "6")
    small, qs, cs = _build(tmp_path, "small", "--dataset", "hotpotqa", "--source", str(HOTPOT),
                           "--questions", "0", "--passages", "25")
    assert len(cs) == 25  # filled exactly to the target with a further question's paragraphs
    assert small["filler_questions"] >= 1 and small["questions"] == 2  # 2 x 10 paragraphs fit in 25
    fit_big = {q["_id"] for q in qb[: big["fit"]]}
    for i, q in enumerate(qs):
        assert (q["_id"] in fit_big) == (i < small["fit"])
    titles = {c["title"] for c in cs}
    assert all(t in titles for q in qs for t, _ in q["context"])


def test_no_titles_replaces_titles_by_ids_in_corpus_and_questions(tmp_path: Path) -> None:
    _, questions, corpus = _build(tmp_path, "nt", "--dataset", "hotpotqa", "--source", str(HOTPOT),
                                  "--questions", "6", "--no-titles")
    source = json.loads(HOTPOT.read_text(encoding="utf-8"))
    originals = {t for r in source for t, _ in r["context"]}
    ids = {c["title"] for c in corpus}
    assert not ids & originals and all(t.startswith("p") and t[1:].isdigit() for t in ids)
    assert len(ids) == len(corpus)
    loaded, _ = load_dataset("hotpotqa", tmp_path / "nt")
    assert all(q.support_titles and set(q.support_titles) <= ids for q in loaded)
    text_of = {c["title"]: c["text"] for c in corpus}
    by_id = {r["_id"]: r for r in source}
    for q in questions:  # each id stands for the paragraph it replaced
        src = {t: tp.join_sentences(s) for t, s in by_id[q["_id"]]["context"]}
        assert {text_of[t] for t, _ in q["context"]} == set(src.values())


@pytest.mark.parametrize("no_titles", [False, True])
def test_musique_support_resolves_to_corpus_documents(tmp_path: Path, no_titles: bool) -> None:
    flags = ["--no-titles"] if no_titles else []
    manifest, questions, corpus = _build(tmp_path, "mu", "--dataset", "musique", "--source", str(MUSIQUE),
                                         "--questions", "3", *flags)
    assert manifest["questions"] == 3
    doc_ids = {d.doc_id for d in load_file(tmp_path / "mu" / "musique_train_pool_corpus.json").docs}
    loaded, _ = load_dataset("musique", tmp_path / "mu")
    for q in loaded:
        assert q.support_texts and all(record_doc_id(t, x) in doc_ids
                                       for t, x in zip(q.support_titles, q.support_texts, strict=True))
    records = json.loads(MUSIQUE.read_text(encoding="utf-8"))
    source_titles = {p["title"] for r in records for p in r["paragraphs"]}
    assert bool({c["title"] for c in corpus} & source_titles) is not no_titles
    assert all("question_decomposition" in q for q in questions)


def test_readers_of_2wiki_hf_and_ircot_layouts_and_unanswerable_musique() -> None:
    wiki = json.loads(TWOWIKI.read_text(encoding="utf-8"))[0]
    q = tp.normalise(wiki)
    assert q is not None
    assert {p.title for p in q.paragraphs if p.supporting} == {t for t, _ in wiki["supporting_facts"]}
    first = next(p for p in q.paragraphs if p.title == wiki["context"][0][0])
    assert first.text == " ".join(wiki["context"][0][1])  # 2Wiki sentences carry no leading space
    hf = {"id": "h1", "question": "q?", "answer": "a", "supporting_facts": {"title": ["B"], "sent_id": [0]},
          "context": {"title": ["A", "B"], "sentences": [["A one.", " A two."], ["B one."]]}}
    h = tp.normalise(hf)
    assert h is not None and [(p.title, p.text, p.supporting) for p in h.paragraphs] == [
        ("A", "A one. A two.", False), ("B", "B one.", True)]
    ircot = {"question_id": "i1", "question_text": "q?", "answers_objects": [{"spans": ["x"]}],
             "contexts": [{"title": "T", "paragraph_text": "t", "is_supporting": True}]}
    i = tp.normalise(ircot)
    assert i is not None and i.answer == "x" and i.paragraphs[0].supporting
    mus = json.loads(MUSIQUE.read_text(encoding="utf-8"))[0]
    assert tp.normalise({**mus, "answerable": False}) is None
    with pytest.raises(ValueError):
        tp.normalise({"question": "no paragraphs"})


def test_bad_options_are_refused(tmp_path: Path) -> None:
    with pytest.raises(SystemExit):
        tp.main(["--dataset", "hotpotqa", "--source", str(HOTPOT), "--out", str(tmp_path / "x"),
                 "--questions", "0", "--passages", "0"])
    with pytest.raises(SystemExit):
        tp.main(["--dataset", "hotpotqa", "--source", str(tmp_path / "missing"),
                 "--out", str(tmp_path / "x")])


def test_questions_without_context_take_support_from_a_shared_corpus(tmp_path: Path) -> None:
    records = json.loads(HOTPOT.read_text(encoding="utf-8"))
    corpus = {t: "".join(s).strip() for r in records for t, s in r["context"]}
    (tmp_path / "src").mkdir()
    questions_only = [{k: r[k] for k in ("_id", "question", "answer", "supporting_facts")} for r in records]
    questions_only.append({"_id": "gone", "question": "q?", "answer": "a",
                           "supporting_facts": [["Nowhere", 0]]})
    (tmp_path / "src" / "train_data.json").write_text(json.dumps(questions_only), encoding="utf-8")
    docs = tmp_path / "src" / "full_docs.json"  # in the source folder: skipped as a question file
    docs.write_text(json.dumps([{"title": t, "content": [x]} for t, x in corpus.items()]), encoding="utf-8")
    src = str(tmp_path / "src")
    manifest, questions, pool = _build(tmp_path, "cm", "--dataset", "hotpotqa", "--source", src,
                                       "--corpus", str(docs), "--questions", "4")
    assert manifest["source_questions"] == 6 and manifest["questions"] == 4  # "gone" has no paragraph
    assert {c["title"]: c["text"] for c in pool} == corpus  # every corpus passage is in the pool
    loaded, _ = load_dataset("hotpotqa", tmp_path / "cm")
    assert all(q.support_titles and set(q.support_titles) <= set(corpus) for q in loaded)
    _, _, small = _build(tmp_path, "cm2", "--dataset", "hotpotqa", "--source", src,
                         "--corpus", str(docs), "--questions", "4", "--passages", "30")
    assert len(small) == 30
    assert {t for q in questions for t, _ in q["supporting_facts"]} <= {c["title"] for c in small}
