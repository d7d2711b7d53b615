"""Ingest pipeline on both real stores + embedder: formats, invariants, idempotence, incremental."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from app.core.errors import BadInput, ConfigError
from ingest.checkpoint import checkpoint_path
from ingest.chunk import chunk_document
from ingest.load import load_file
from ingest.options import IngestOptions
from ingest.pipeline import ingest_path
from tests.support.ingest_graph import assert_invariants, counts, make_services, q

FIX = Path(__file__).parent / "fixtures" / "ingest"
ALL = ["notes.txt", "guide.md", "chinese.txt", "extra.jsonl", "apollo.pdf", "musique_corpus.json",
       "hotpotqa_corpus.json", "hotpotqa_questions.json", "musique_questions.jsonl"]


def _copy(dst: Path, names: list[str]) -> Path:
    dst.mkdir(parents=True, exist_ok=True)
    for name in names:
        shutil.copy(FIX / name, dst / name)
    return dst


def test_every_format_builds_the_documented_graph(settings, store, embedder, tmp_path) -> None:
    corpus = _copy(tmp_path / "corpus", ALL)
    (corpus / "broken.json").write_text("{nope")
    events: list[dict] = []
    heard: list[int] = []
    services = make_services(settings, store, embedder)
    services.extras["ingest_listeners"] = [lambda: heard.append(1)]
    res = ingest_path(services, corpus, IngestOptions(), events.append)
    assert res.files_processed == len(ALL) and res.files_failed == 1
    assert res.errors[0]["file"].endswith("broken.json") and "invalid JSON" in res.errors[0]["error"]
    c = counts(store)
    assert c["node:Chunk"] == res.chunks_total == res.chunks_new
    assert c["node:Document"] == res.documents
    assert c["node:Entity"] == res.entities_created == res.entity_keys
    assert c["rel:CO_OCCURS"] == res.cooccur_edges and c.get("rel:RELATES_TO", 0) == res.relates_to_edges
    assert res.relations_created == res.cooccur_edges + res.relates_to_edges + res.llm_rel_edges
    assert res.entity_surface_forms >= res.entity_keys and heard == [1]
    assert_invariants(store)
    # HotpotQA / MuSiQue paragraphs: one Document each, titled by the paragraph title, de-duplicated
    questions = json.loads((FIX / "hotpotqa_questions.json").read_text())
    hotpot_titles = {t for qn in questions for t, _ in qn["context"]}
    rows = q(store, "MATCH (c:Chunk) WHERE c.source ENDS WITH 'hotpotqa_questions.json' "
                    "RETURN DISTINCT c.title AS t")
    assert {r["t"] for r in rows} == hotpot_titles
    jmp = "MATCH (c:Chunk {title: 'Journal of Mathematical Physics'}) RETURN count(c) AS n"
    assert q(store, jmp)[0]["n"] == 1
    # entities with aliases, CJK and numbers with units
    ents = {r["id"]: r for r in q(store, "MATCH (e:Entity) RETURN e.id AS id, e.name AS name, "
                                         "e.aliases AS aliases, e.freq AS freq, e.norm AS norm")}
    assert {"rhine", "nasa", "长江", "1 230 km", "analytical engine"} <= set(ents)
    rhine = ents["rhine"]
    assert rhine["freq"] >= 3 and rhine["norm"] == "rhine" and "Rhine" in rhine["aliases"]
    stages = [e["stage"] for e in events]
    order = ["scan_input", "file_error", "hash_computed", "schema_index", "existing_scan",
             "embedding_batch", "embedding_progress", "entity_extraction", "cooccurrence", "relates_to",
             "relation_start", "relation_extraction_done"]
    assert [s for s in order if s in stages] == order
    assert [stages.index(s) for s in order] == sorted(stages.index(s) for s in order)
    last = [e for e in events if e["stage"] == "embedding_progress"][-1]
    assert last["current"] == last["total"] == res.chunks_new
    # a re-run skips finished work (checkpoint) and changes nothing
    before = counts(store)
    again = ingest_path(services, corpus, IngestOptions())
    assert again.chunks_new == 0 and again.chunks_skipped == res.chunks_total and counts(store) == before
    assert checkpoint_path(corpus.resolve(), settings.checkpoint_dir(), tmp_path).is_file()  # in the data dir
    assert not list(tmp_path.glob(".ingest_ck_*"))  # never beside the sources
    # a re-run without checkpoint re-embeds (cache) but is idempotent
    third = ingest_path(services, corpus, IngestOptions(checkpoint=False))
    assert third.chunks_new == res.chunks_total and counts(store) == before
    assert_invariants(store)


def test_incremental_edit_and_delete_match_a_clean_ingest(settings, store, backend, embedder,  # type: ignore[no-untyped-def]
                                                           tmp_path) -> None:
    corpus = _copy(tmp_path / "c", ["notes.txt", "extra.jsonl", "guide.md"])
    services = make_services(settings, store, embedder)
    opts = IngestOptions(incremental=True, checkpoint=False, chunk_size=300, chunk_overlap=60)
    first = ingest_path(services, corpus, opts)
    assert first.chunks_new == first.chunks_total
    assert q(store, "MATCH (e:Entity {id: 'ccnr'}) RETURN e.freq AS f")[0]["f"] >= 1
    notes = corpus / "notes.txt"
    text = notes.read_text()
    edited = text.replace("founded in 1460", "founded in 1460 by Pope Pius II")
    edited = edited[: edited.index("The Central Commission")].rstrip() + "\n"  # drop the last paragraph
    notes.write_text(edited)
    second = ingest_path(services, corpus, opts)
    assert second.chunks_skipped >= 2 and second.chunks_new >= 1 and second.chunks_deleted >= 1
    doc = load_file(notes).docs[0]
    expected = {c.id for c in chunk_document(doc, 300, 60)}
    stored = {r["id"] for r in q(store, "MATCH (c:Chunk {source: $s}) RETURN c.id AS id", {"s": str(notes)})}
    assert stored == expected
    assert q(store, "MATCH (e:Entity {id: 'ccnr'}) RETURN e") == []  # orphan entity removed
    assert q(store, "MATCH (e:Entity {id: 'pope pius ii'}) RETURN e.freq AS f")[0]["f"] == 1
    assert_invariants(store)
    (corpus / "extra.jsonl").unlink()  # a removed file: its chunks, documents and lone entities go
    third = ingest_path(services, corpus, opts)
    assert third.chunks_deleted == 2 and third.chunks_new == 0
    assert q(store, "MATCH (e:Entity {id: 'ada lovelace'}) RETURN e") == []
    assert_invariants(store)
    incremental = counts(store)
    other = backend.settings(settings.graph_name + "_b")  # Neo4j: one database, so after the counts
    backend.claim(other.graph_name)
    other_store = backend.open_store(other)
    try:
        clean = ingest_path(make_services(other, other_store, embedder), corpus, opts)
        assert clean.chunks_total == third.chunks_total
        assert counts(other_store) == incremental
    finally:
        backend.drop(other.graph_name)
        other_store.close()


def test_planning_reads_each_file_once(settings, store, embedder, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """An unchanged file is read once per re-ingest: its Source fingerprint hashes the bytes loaded."""
    names = ["notes.txt", "apollo.pdf"]
    corpus = _copy(tmp_path / "c", names)
    services = make_services(settings, store, embedder)
    opts = IngestOptions(incremental=True, checkpoint=False)
    ingest_path(services, corpus, opts)
    reads: list[str] = []
    open_ = Path.open

    def counting_open(self: Path, *args, **kwargs):  # type: ignore[no-untyped-def]  # read_bytes opens too
        reads.append(self.name)
        return open_(self, *args, **kwargs)

    monkeypatch.setattr(Path, "open", counting_open)
    again = ingest_path(services, corpus, opts)
    assert again.chunks_skipped == again.chunks_total > 0 and again.chunks_new == 0
    assert sorted(r for r in reads if r in names) == sorted(names)
    monkeypatch.undo()
    rows = q(store, "MATCH (s:Source) RETURN s.path AS path, s.content_hash AS h")
    hashes = {r["path"]: r["h"] for r in rows}
    assert hashes == {str(corpus / n): hashlib.sha256((corpus / n).read_bytes()).hexdigest() for n in names}


def test_refresh_rebuilds_entities_without_reembedding(settings, store, embedder, tmp_path) -> None:
    corpus = _copy(tmp_path / "r", ["extra.jsonl", "guide.md"])
    services = make_services(settings, store, embedder)
    ingest_path(services, corpus, IngestOptions())
    before = counts(store)
    res = ingest_path(services, corpus, IngestOptions(refresh=True))
    assert res.chunks_new == 0 and res.chunks_skipped == 0 and counts(store) == before
    assert_invariants(store)


@pytest.mark.pristine_schema  # an index of 8 dimensions, not the standard one
def test_dimension_mismatch_is_refused_in_one_line(settings, store, embedder, tmp_path) -> None:
    store.keep_vector_index = True  # a store index of another dimension (RETRIEVAL_VECTOR_BACKEND=store)
    store.bootstrap(8)
    corpus = _copy(tmp_path / "d", ["extra.jsonl"])
    with pytest.raises(ConfigError) as err:
        ingest_path(make_services(settings, store, embedder), corpus)
    assert "dimension 384" in str(err.value) and "8" in str(err.value) and "\n" not in str(err.value)
    assert q(store, "MATCH (c:Chunk) RETURN count(c) AS n")[0]["n"] == 0


def test_missing_path_and_empty_directory(settings, store, embedder, tmp_path) -> None:
    services = make_services(settings, store, embedder)
    with pytest.raises(BadInput) as err:
        ingest_path(services, tmp_path / "nope")
    assert err.value.status == 404 and err.value.field == "path"
    (tmp_path / "empty").mkdir()
    res = ingest_path(services, tmp_path / "empty")
    assert res.files_processed == 0 and res.chunks_new == 0
