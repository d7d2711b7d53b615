"""Ingest stages without a store: loaders, chunker, normalisation, entities, relation parsing, checkpoint."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from ingest.checkpoint import Checkpoint, checkpoint_path
from ingest.chunk import chunk_document, chunk_text, split_sentences
from ingest.entities import extract_heuristic, parse_llm_entities
from ingest.llm_relations import (
    MalformedReply,
    clamp_confidence,
    map_type,
    parse_reply,
    to_relations,
    window_pairs,
)
from ingest.load import LoadError, decode, load_file, scan
from ingest.normalise import normalise
from ingest.relations import relates_rows

FIX = Path(__file__).parent / "fixtures" / "ingest"


# -- load ---------------------------------------------------------------------------
def test_hotpotqa_question_file_paragraphs_are_deduplicated() -> None:
    data = json.loads((FIX / "hotpotqa_questions.json").read_text())
    titles = [(t, "".join(s).strip()) for q in data for t, s in q["context"]]
    loaded = load_file(FIX / "hotpotqa_questions.json")
    assert len(loaded.docs) == len(set(titles))
    assert {d.title for d in loaded.docs} == {t for t, _ in titles}
    assert all(d.source == str(FIX / "hotpotqa_questions.json") for d in loaded.docs)


def test_dedup_within_a_file(tmp_path: Path) -> None:
    rec = {"title": "A", "text": "Same text."}
    (tmp_path / "dup.json").write_text(json.dumps([rec, rec, {"title": "B", "text": "Other."}]))
    assert [d.title for d in load_file(tmp_path / "dup.json").docs] == ["A", "B"]


def test_corpus_shapes_and_formats() -> None:
    hc = load_file(FIX / "hotpotqa_corpus.json")
    assert len(hc.docs) == 12 and all(d.text and not d.text.startswith(" ") for d in hc.docs)
    mc = load_file(FIX / "musique_corpus.json")
    assert len(mc.docs) == 30 and mc.docs[0].title == "Journal of Mathematical Physics"
    mq = load_file(FIX / "musique_questions.jsonl")
    assert len(mq.docs) == 20
    pdf = load_file(FIX / "apollo.pdf")
    assert len(pdf.docs) == 1 and "Neil Armstrong" in pdf.docs[0].text and pdf.docs[0].title == "apollo"
    md = load_file(FIX / "guide.md")
    assert md.docs[0].title == "Brewing Guide"
    assert load_file(FIX / "notes.txt").docs[0].title == "notes"


def test_undecodable_bytes_are_replaced_and_counted(tmp_path: Path) -> None:
    p = tmp_path / "latin.txt"
    p.write_bytes(b"Caf" + b"\xe9 in Z\xfcrich. " + "Real \ufffd kept.".encode())
    loaded = load_file(p)
    assert loaded.replaced_chars == 2
    assert "Caf\ufffd" in loaded.docs[0].text
    assert decode(b"\xef\xbb\xbfhello") == ("hello", 0)


@pytest.mark.parametrize("name,content,message", [
    ("bad.json", "{not json", "invalid JSON"),
    ("shape.json", "[1, 2]", "must be objects"),
    ("notext.json", '[{"title": "x"}]', "text field"),
    ("num.json", "42", "neither a list nor an object"),
    ("bad.jsonl", '{"title": "a", "text": "b"}\n{oops', "invalid JSON"),
    ("broken.pdf", "%PDF-1.4 garbage", "cannot read PDF"),
])
def test_unreadable_files_raise_load_error(tmp_path: Path, name: str, content: str, message: str) -> None:
    p = tmp_path / name
    p.write_text(content)
    with pytest.raises(LoadError, match=message):
        load_file(p)


def test_scan_skips_hidden_and_unsupported(tmp_path: Path) -> None:
    shutil.copy(FIX / "notes.txt", tmp_path / "a.txt")
    (tmp_path / ".ingest_ck_x.json").write_text("{}")
    (tmp_path / "image.png").write_bytes(b"\x89PNG")
    (tmp_path / "sub").mkdir()
    shutil.copy(FIX / "guide.md", tmp_path / "sub" / "b.md")
    assert [p.name for p in scan(tmp_path)] == ["a.txt", "b.md"]


# -- chunk ----------------------------------------------------------------------------
def test_chunks_respect_size_overlap_and_sentences() -> None:
    text = (FIX / "notes.txt").read_text()
    chunks = chunk_text(text, 300, 80)
    assert len(chunks) > 4
    assert all(len(c) <= 300 for c in chunks)
    sentences = set(split_sentences(text))
    for c in chunks:  # cut at sentence boundaries: every piece is a whole sentence
        assert all(s in sentences for s in split_sentences(c))
    overlaps = sum(1 for a, b in zip(chunks, chunks[1:], strict=False) if split_sentences(a)[-1] in b)
    assert overlaps >= 1


def test_cjk_chunking_has_no_spaces_and_respects_size() -> None:
    text = (FIX / "chinese.txt").read_text()
    chunks = chunk_text(text, 60, 20)
    assert len(chunks) >= 2 and all(len(c) <= 60 for c in chunks)
    assert all(" " not in c for c in chunks)
    assert split_sentences("北京是首都。上海很大！")[1] == "上海很大！"


def test_long_sentence_is_hard_split() -> None:
    chunks = chunk_text("word " * 500, 200, 40)
    assert all(len(c) <= 200 for c in chunks) and len(chunks) >= 12


def test_chunk_ids_are_stable_and_content_addressed() -> None:
    doc = load_file(FIX / "notes.txt").docs[0]
    a = chunk_document(doc, 300, 80)
    b = chunk_document(doc, 300, 80)
    assert [c.id for c in a] == [c.id for c in b]
    assert len({c.id for c in a}) == len(a)
    assert all(c.id.startswith(doc.doc_id + f":{c.seq}:") and c.hash[:12] in c.id for c in a)
    changed = type(doc)(doc.doc_id, doc.title, doc.text.replace("1460", "1461"), doc.source)
    diff = [x.id != y.id for x, y in zip(a, chunk_document(changed, 300, 80), strict=True)]
    assert 1 <= sum(diff) <= 2


# -- normalise / entities -------------------------------------------------------------------
@pytest.mark.parametrize("surface,key", [
    ("The Beatles", "beatle"), ("beatles", "beatle"), ("  New   York ", "new york"),
    ("U.S.", "u s"), ("Ｎａｓａ", "nasa"), ("Rock & Roll", "rock and roll"), ("Cities", "city"),
    ("Physics", "physics"), ("Paris", "paris"), ("O'Brien", "o brien"), ("北京", "北京"),
])
def test_normalise(surface: str, key: str) -> None:
    assert normalise(surface) == key


def test_heuristic_entities_rules() -> None:
    text = ("The Central Commission for the Navigation of the Rhine (CCNR) was founded in 1815 in Vienna. "
            "The Rhine is about 1,230 km long. In 2019 NASA spent $20 billion. 长江、上海和武汉。")
    keys = {m.key: m for m in extract_heuristic(text)}
    assert "central commission for the navigation of the rhine" in keys
    assert {"ccnr", "nasa", "rhine", "vienna", "1 230 km", "20 billion"} <= set(keys)
    assert {"长江", "上海", "武汉"} <= set(keys)
    assert "the" not in keys and "in" not in keys and "in 2019" not in keys
    assert keys["rhine"].count == 1 and keys["rhine"].name == "Rhine"


def test_heuristic_limits() -> None:
    text = " ".join(f"Name{i} Person{i} said." for i in range(30))
    assert len(extract_heuristic(text, max_per_chunk=5)) == 5
    assert all(len(m.key) >= 9 for m in extract_heuristic("Al met Bo at Xavier Hall.", min_len=9))


def test_aliases_group_by_key() -> None:
    ms = extract_heuristic("The Beatles were famous. Beatles songs. BEATLES forever.")
    beatle = next(m for m in ms if m.key == "beatle")
    assert set(beatle.surfaces) == {"Beatles", "BEATLES"}


def test_parse_llm_entities() -> None:
    assert parse_llm_entities('{"entities": ["Rhine", {"name": "Basel"}]}') == ["Rhine", "Basel"]
    assert parse_llm_entities('```json\n["A", "B"]\n```') == ["A", "B"]
    assert parse_llm_entities("no json here") is None
    assert parse_llm_entities('{"entities": "Rhine"}') is None


# -- relations ----------------------------------------------------------------------------------
def test_rel_type_mapping_and_confidence() -> None:
    assert map_type("causes") == "CAUSES" and map_type("leads to") == "CAUSES"
    assert map_type("part-of") == "PART_OF" and map_type("NONE") is None and map_type("TELEPORTS") is None
    assert clamp_confidence(1.7) == 1.0 and clamp_confidence(-2) == 0.0 and clamp_confidence("x") == 0.5
    assert clamp_confidence(None) == 0.5 and clamp_confidence(float("nan")) == 0.5


def test_parse_reply_shapes_and_malformed() -> None:
    assert parse_reply('{"relations": [{"type": "SUPPORTS"}]}') == [{"type": "SUPPORTS"}]
    assert parse_reply('{"type": "CAUSES", "confidence": 0.9}') == [{"type": "CAUSES", "confidence": 0.9}]
    assert parse_reply('Sure! [{"type": "FOLLOWS"}]') == [{"type": "FOLLOWS"}]
    for bad in ("nothing", '{"relations": [1]}', '{"relations": [', '{"foo": 1}'):
        with pytest.raises(MalformedReply):
            parse_reply(bad)
    items: list[dict[str, object]] = [{"type": "causes", "confidence": 3, "direction": "B->A"},
                                      {"type": "weird"},
                                      {"type": "CAUSES", "confidence": 0.2, "direction": "B->A"}]
    rels, dropped = to_relations(items, "a", "b")
    assert dropped == 1 and len(rels) == 1
    assert (rels[0].src, rels[0].dst, rels[0].type, rels[0].confidence) == ("b", "a", "CAUSES", 1.0)


def test_window_pairs_and_relates_rows() -> None:
    ids = ["c0", "c1", "c2", "c3"]
    assert window_pairs(ids, 1) == [("c0", "c1"), ("c1", "c2"), ("c2", "c3")]
    assert window_pairs(ids, 2, new_from=3) == [("c1", "c3"), ("c2", "c3")]
    rows = relates_rows(ids, {"c0": ["x", "y"], "c1": ["y"], "c2": ["z"], "c3": ["x", "y"]}, 2)
    assert rows == [{"a": "c0", "b": "c1", "shared": 1, "weight": 0.5},
                    {"a": "c1", "b": "c3", "shared": 1, "weight": 0.5}]


# -- checkpoint ------------------------------------------------------------------------------------
def test_checkpoint_roundtrip_and_scope(tmp_path: Path) -> None:
    src = tmp_path / "corpus"
    src.mkdir()
    path = checkpoint_path(src, None, tmp_path / "state")
    assert path == tmp_path / ".ingest_ck_corpus.json"
    ck = Checkpoint(path, "embedded:g1", str(src))
    ck.mark_chunks(["a", "b"])
    ck.mark_pair("a", "b", 1)
    ck.finish()
    data = json.loads(path.read_text())
    assert data["chunks"]["a"] == {"emb": True, "ent": True} and data["rel_pairs"]["a|b"] == {"rels": 1}
    again = Checkpoint.load(path, "embedded:g1", str(src))
    assert again.chunk_done("a") and again.pair_done("a", "b") and not again.was_incomplete
    assert not Checkpoint.load(path, "embedded:other", str(src)).chunk_done("a")
    assert not Checkpoint.load(path, "embedded:g1", str(src), fresh=True).chunk_done("a")
    path.write_text("{corrupt")
    assert Checkpoint.load(path, "embedded:g1", str(src)).chunks == {}


def test_checkpoint_goes_to_state_dir_when_source_dir_is_read_only(tmp_path: Path) -> None:
    ro = tmp_path / "ro"
    ro.mkdir()
    (ro / "f.txt").write_text("x")
    ro.chmod(0o555)
    try:
        path = checkpoint_path(ro / "f.txt", None, tmp_path / "state")
        assert path.parent == tmp_path / "state" and path.name.startswith(".ingest_ck_f.txt-")
        moved = checkpoint_path(ro / "f.txt", tmp_path / "cks", tmp_path / "state")
        assert moved.parent == tmp_path / "cks"
    finally:
        ro.chmod(0o755)


def test_encode_batch_override_gives_the_same_unit_vectors(embedder) -> None:  # type: ignore[no-untyped-def]
    from ingest.embed import embed_texts

    texts = ["Paris", "The Eiffel Tower in Paris was completed in 1889 for the World's Fair.", "x y z"]
    default = embedder.encode_raw(texts)
    one_by_one = embedder.encode_raw(texts, batch_size=1)
    embedder.clear_cache()
    via_ingest = embed_texts(embedder, texts, 2)
    for a, b, c in zip(default, one_by_one, via_ingest, strict=True):
        assert len(a) == len(b) == len(c) == embedder.dimension
        assert max(abs(x - y) for x, y in zip(a, b, strict=True)) < 1e-4
        assert max(abs(x - y) for x, y in zip(a, c, strict=True)) < 1e-4
