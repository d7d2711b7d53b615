"""bench/qmsum_pool.py: a QMSum meeting-transcript pool for `neorag eval retrieval` (issue 24's real corpus
without Wikipedia titles), without a store."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.evaluation.retrieval_eval import load_dataset
from bench import qmsum_pool as qp
from ingest.load import load_file, record_doc_id

ROOT = Path(__file__).resolve().parents[1]
FIX = ROOT / "tests" / "fixtures" / "retrieval" / "qmsum"  # 2 QMSum val meetings, cut (README there)


@pytest.fixture(scope="module")
def pool(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, Path]:
    out = tmp_path_factory.mktemp("qmsum")
    return qp.main(["--source", str(FIX), "--out", str(out)]), out


def test_clean_turn_drops_markup_and_fillers() -> None:
    turn = {"speaker": "Grad A", "content": "to {disfmarker} to handle {vocalsound} ."}
    assert qp.clean_turn(turn) == "Grad A: to to handle."
    assert qp.clean_turn({"speaker": "B", "content": "{vocalsound} ."}) == ""


def test_passages_cover_every_turn_once_and_stay_under_the_bound() -> None:
    turns = json.loads((FIX / "education_10.json").read_text(encoding="utf-8"))["meeting_transcripts"]
    passages = qp.passages_of("education_10", turns, 400, 700)
    covered = [i for p in passages for i in range(p.first, p.last + 1)]
    assert covered == list(range(len(turns)))
    # a passage only passes max_chars when one turn alone does
    for p in passages:
        assert len(p.text) <= 700 or p.first == p.last


def test_filler_turns_belong_to_a_passage() -> None:
    filler = {"speaker": "A", "content": "{vocalsound} ."}  # nothing left once the markup is gone
    turns = [filler, {"speaker": "B", "content": "The budget is fixed ."}, filler,
             {"speaker": "C", "content": "We need a new design ."}, filler]
    passages = qp.passages_of("m", turns, 20, 700)
    assert [(p.first, p.last) for p in passages] == [(0, 1), (2, 4)]
    assert passages[0].text == "B: The budget is fixed."


def test_supporting_passages_overlap_the_spans() -> None:
    passages = [qp.Passage("m", 0, 3, "a"), qp.Passage("m", 4, 9, "b"), qp.Passage("m", 10, 12, "c")]
    assert [p.text for p in qp.supporting(passages, [(9, 10)])] == ["b", "c"]
    assert qp.supporting(passages, [(13, 20)]) == []


def test_pool_reads_as_a_musique_dataset_with_file_name_titles(pool: tuple[dict, Path]) -> None:
    meta, out = pool
    assert meta["meetings"] == 2 and meta["questions"] == 7 and meta["questions_left_out"] == 0
    questions, corpus_path = load_dataset("musique", out)
    assert len(questions) == 7
    docs = load_file(corpus_path).docs
    assert {d.title for d in docs} == {"covid_2", "education_10"}
    ids = {d.doc_id for d in docs}
    for q in questions:  # every supporting passage is a corpus document, matched by title + text
        assert q.support_titles and all(
            record_doc_id(t, x) in ids for t, x in zip(q.support_titles, q.support_texts, strict=True))


def test_too_broad_questions_are_left_out(tmp_path: Path) -> None:
    meta = qp.main(["--source", str(FIX), "--out", str(tmp_path), "--max-gold", "1"])
    assert meta["questions"] + meta["questions_left_out"] == 7
    assert meta["questions_left_out"] > 0
    kept = json.loads((tmp_path / "meetings.json").read_text(encoding="utf-8"))
    assert all(len(q["paragraphs"]) == 1 for q in kept)


def test_an_empty_source_is_refused(tmp_path: Path) -> None:
    with pytest.raises(SystemExit):
        qp.main(["--source", str(tmp_path), "--out", str(tmp_path / "out")])
