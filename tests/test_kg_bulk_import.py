"""``neorag kg load --bulk`` / ``neorag neo4j import``: Neo4j's bulk importer writes the graph the online
loader writes (same nodes, edges and properties; same answers to every KG action and KG-R1 chat text),
refuses a running server or an existing database, reports and skips bad samples, and a failed import
leaves the previous database untouched. Run on real Neo4j servers (the session's and short-lived ones)."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from app.core.config import Settings
from app.core.errors import StoreUnavailable
from app.kg.cache import KGCache
from app.kg.chat import run_chat
from app.kg.service import run_actions
from app.store.base import GraphStore
from app.store.neo4j_server import Neo4jInfo
from ingest.kg import bulk
from ingest.kg.bulk_load import bulk_load_path
from ingest.kg.loader import load_path
from tests.conftest import neo4j_for_tests
from tests.support.backends import NEO4J_TEST_PASSWORD, Backend
from tests.support.ingest_graph import counts, q
from tests.test_neo4j_server import error_line, neorag

FIXTURES = Path(__file__).parent / "fixtures"
KGR1 = FIXTURES / "kg_r1_golden" / "data_kg"  # case variants, isolated entities, repeated names, vocab
ROG = FIXTURES / "kg" / "rog"
pytestmark = pytest.mark.backends("neo4j")


NODES = ("MATCH (n) WHERE any(l IN labels(n) WHERE l STARTS WITH 'KG') "
         "RETURN labels(n) AS labels, n {.*, generation: null} AS props")
EDGES = ("MATCH (a)-[r]->(b) WHERE type(r) STARTS WITH 'KG' "
         "RETURN type(r) AS t, a.key AS a, b.key AS b, properties(r) AS props")


def graph_of(store: GraphStore) -> dict[str, Any]:
    """Every KG node and edge with its properties (keys for ends; the generation token aside), sorted."""
    nodes = sorted((tuple(r["labels"]), json.dumps(r["props"], sort_keys=True)) for r in q(store, NODES))
    edges = sorted((r["t"], r["a"], r["b"], json.dumps(r["props"], sort_keys=True)) for r in q(store, EDGES))
    return {"nodes": nodes, "edges": edges}


def every_action(store: GraphStore, dataset: str) -> list[dict[str, Any]]:
    """Every action of every sample on every name of it (and a case variant, an unknown name), with every
    relation of the sample and every concept."""
    items: list[dict[str, Any]] = []
    samples = q(store, "MATCH (s:KGSample {dataset: $d}) RETURN s.sample_id AS id, s.relations AS rels, "
                "s.q_entity AS q, s.a_entity AS a ORDER BY id", {"d": dataset})
    for row in samples:
        names = {r["n"] for r in q(store, "MATCH (e:KGEntity)-[f:KG_FACT {sample: $k}]-() RETURN e.name AS n",
                                   {"k": f"{dataset}/{row['id']}"})}
        names |= set(row["q"] or []) | set(row["a"] or [])
        names |= {n.upper() for n in names} | {"Nobody Known"}
        rels = (row["rels"] or []) + ["no.such.relation"]
        base = {"dataset_name": dataset, "sample_id": row["id"]}
        for name in sorted(names):
            for action in ("get_relations", "get_head_relations", "get_tail_relations", "get_relations_in",
                           "get_relations_out"):
                items.append({**base, "action_type": action, "entity_id": name})
            for rel in rels:
                for action in ("get_head_entities", "get_tail_entities", "get_entities_in",
                               "get_entities_out"):
                    items.append({**base, "action_type": action, "entity_id": name, "relation": rel})
            for concept in sorted({r.split(".")[0] for r in rels}):
                items.append({**base, "action_type": "get_conditional_relations", "entity_id": name,
                              "concept": concept})
    items.append({"dataset_name": dataset, "sample_id": "no-such-sample", "action_type": "get_relations",
                  "entity_id": "x"})
    return items


def answers(store: GraphStore, items: list[dict[str, Any]]) -> tuple[list[Any], list[str]]:
    """(seed-shape answers, KG-R1 chat texts), times left out."""
    seed = [{k: v for k, v in a.items() if k != "query_time"} for a in run_actions(store, KGCache(0), items)]
    random.seed(5)  # KG-R1 shuffles some relation lists: the same draws on both stores
    chat = [str(a["choices"][0]["message"]["content"]) for a in run_chat(store, KGCache(0), items)]
    return seed, chat


def test_bulk_import_writes_the_graph_and_answers_of_the_online_loader(
        backend: Backend, settings: Settings, store: GraphStore, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    online = load_path(store, KGR1, "webqsp", sample_edges=True)  # KG_FACT too: every edge compared
    server = neo4j_for_tests(tmp_path / "bulk")
    monkeypatch.setattr(bulk, "PARALLEL_AFTER", 0)  # the buckets encoded by a worker process from the start
    try:
        result = bulk_load_path(server, settings.model_copy(update={"kg_sample_edges": True,
                                                                    "kg_bulk_workers": 1}), KGR1, "webqsp")
        report = result.report
        assert (report.samples_loaded, report.triples, report.duplicates_collapsed) == (
            online.samples_loaded, online.triples, online.duplicates_collapsed)
        assert report.samples_skipped == online.samples_skipped == 1  # an id in both splits: test wins
        assert report.samples_rejected == 0 and report.fixups  # WebQTrn-2 is empty: [] arrays set after
        other = backend.open_store(settings.model_copy(update={"neo4j_uri": result.info.uri}))
        try:
            want, got = graph_of(store), graph_of(other)
            assert counts(other) == counts(store)
            assert got == want and len(want["nodes"]) > 60 and len(want["edges"]) > 100
            dataset = q(store, "MATCH (d:KGDataset) RETURN d {.*, generation: null} AS p")
            assert dataset[0]["p"]["relation_vocab"] and dataset[0]["p"]["seq"] == 0
            items = every_action(store, "webqsp")
            assert items == every_action(other, "webqsp") and len(items) > 1000
            seed_want, chat_want = answers(store, items)
            seed_got, chat_got = answers(other, items)
            assert seed_got == seed_want and chat_got == chat_want
            found = [r for a in seed_want for r in a["results"]]  # not all misses
            assert any(r.get("relations") for r in found) and any(r.get("tail_entities") for r in found)
        finally:
            other.close()
    finally:
        server.stop()


def cli_env(data_dir: Path) -> dict[str, Any]:
    from app.store.embedded import free_port

    return {"NEORAG_BACKEND": "neo4j", "NEORAG_NEO4J_DATA_DIR": str(data_dir),
            "NEORAG_NEO4J_URI": f"bolt://127.0.0.1:{free_port()}", "NEORAG_NEO4J_HTTP_PORT": str(free_port()),
            "NEORAG_NEO4J_PASSWORD": NEO4J_TEST_PASSWORD, "NEORAG_NEO4J_HEAP": "768m",
            "NEORAG_NEO4J_PAGECACHE": "256m"}


@pytest.mark.neo4j
def test_bad_samples_are_reported_and_skipped_and_refusals_are_one_line(tmp_path: Path) -> None:
    src = tmp_path / "rog.jsonl"
    rows = [json.dumps({"id": "ok-1", "question": "q", "answer": ["B"], "q_entity": ["A"], "a_entity": ["B"],
                        "graph": [["A", "r", "B"], ["A", "r", "B"]]}),
            "{not json",
            json.dumps({"id": "missing", "graph": [["A", "r"]]}),
            json.dumps({"id": "huge", "graph": [["A", "r", "x" * 10_000_000]]}),
            json.dumps({"id": "ok-2", "graph": [["B", "s", "C"]]})]
    src.write_text("\n".join(rows) + "\n")
    kgr1 = tmp_path / "kgr1" / "mini"
    kgr1.mkdir(parents=True)
    (kgr1 / "entities.txt").write_text("m.a\nm.b\n")
    (kgr1 / "relations.txt").write_text("r.one\n")
    (kgr1 / "train_simple.json").write_text(
        json.dumps({"id": "good", "question": "q", "answers": [], "entities": [0],
                    "subgraph": {"tuples": [[0, 0, 1]], "entities": [0, 1]}}) + "\n"
        + json.dumps({"id": "bad", "entities": [0], "subgraph": {"tuples": [[0, 0, 7]], "entities": [0]}})
        + "\n")
    data = tmp_path / "db"
    env = cli_env(data)
    wrong = error_line(neorag("kg", "load", str(src), "--dataset", "rog", "--bulk",
                              NEORAG_BACKEND="embedded"))
    assert "--bulk imports into a local Neo4j database" in wrong and "NEORAG_BACKEND=neo4j" in wrong
    try:
        done = neorag("kg", "load", str(src), "--dataset", "rog", "--bulk", **env)
        assert done.returncode == 0, done.stdout + done.stderr
        skipped = [ln for ln in done.stderr.splitlines() if ln.startswith("skipped: ")]
        assert skipped == ["skipped: rog.jsonl line 2: not JSON: Expecting property name enclosed in "
                           "double quotes",
                           "skipped: rog.jsonl line 3: triple 0 is not 3 values",
                           "skipped: rog.jsonl line 4: an entity name is longer than 4000 bytes ('"
                           + "x" * 40 + "'...)"], done.stderr
        assert "2 samples imported" in done.stdout and "3 skipped (bad input)" in done.stdout
        assert "1 duplicates collapsed" in done.stdout
        # the server runs now: refused, then an existing database refused, with the way out on one line
        running = error_line(neorag("neo4j", "import", str(kgr1.parent), "--dataset", "mini", **env))
        assert "is running" in running and "neorag neo4j stop" in running
        assert neorag("neo4j", "stop", **env).returncode == 0
        exists = error_line(neorag("neo4j", "import", str(kgr1.parent), "--dataset", "mini", **env))
        assert "already holds the database 'neo4j'" in exists and "--force" in exists
        forced = neorag("neo4j", "import", str(kgr1.parent), "--dataset", "mini", "--force", **env)
        assert forced.returncode == 0, forced.stdout + forced.stderr
        bad = "skipped: train_simple.json line 2: tuple [0, 0, 7] is outside the vocabularies"
        assert bad in forced.stderr
        assert "1 samples imported" in forced.stdout and "kept in" in forced.stdout
    finally:
        neorag("neo4j", "stop", **env)


def test_a_failed_import_leaves_the_previous_database_untouched(
        backend: Backend, settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    server = neo4j_for_tests(tmp_path / "db")
    try:
        first = bulk_load_path(server, settings, ROG, "webqsp")
        before = graph_of_server(backend, settings, first.info)
        types = {e[0] for e in before["edges"]}
        assert "KG_REL" in types and "KG_FACT" not in types  # KG_FACT only when asked
        assert before["nodes"] and before["edges"]
        server.stop()
        broken = dict(bulk.FILES)
        kind, name, header = broken["rels"]
        broken["rels"] = (kind, name, header.replace("(E)", "(NoSuchGroup)"))
        monkeypatch.setattr(bulk, "FILES", broken)
        with pytest.raises(StoreUnavailable, match="neo4j-admin database import failed"):
            bulk_load_path(server, settings, KGR1, "webqsp", force=True)
        assert not list(server.data_dir.glob("neo4j.before-load-*"))  # put back, not left aside
        assert not list(server.data_dir.parent.glob(".neorag-import-*"))  # the CSV work dir is gone
        info = server.start(timeout_s=300)
        assert graph_of_server(backend, settings, info) == before
    finally:
        server.stop()


def graph_of_server(backend: Backend, settings: Settings, info: Neo4jInfo) -> dict[str, Any]:
    store = backend.open_store(settings.model_copy(update={"neo4j_uri": info.uri}))
    try:
        return graph_of(store)
    finally:
        store.close()
