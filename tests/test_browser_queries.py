"""cypher/browser/*.cypher (ready-to-paste Neo4j Browser queries) on the session's real Neo4j.

Each file is run twice on a fixture graph (an ingested corpus plus two KG datasets): as pasted (its
``:param`` lines set null: the fallback) and with parameters naming one thing of the fixture graph; both
must return nodes AND relationships, so Browser draws a graph.
"""

from __future__ import annotations

import ast
import re
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import neo4j
import pytest

from app.core.config import REPO_ROOT, Settings
from app.kg.browse import write_sample_edges
from app.services.container import build_services
from ingest.kg.loader import load_path
from ingest.options import IngestOptions
from ingest.pipeline import ingest_path
from tests.support.backends import Backend
from tests.support.ingest_graph import q
from tests.support.kg import ROG
from tests.support.reasoning import PQ_KB, PQ_QUESTIONS

pytestmark = pytest.mark.backends("neo4j")  # Neo4j Browser queries (Cypher 5 syntax: CALL () { }, COUNT { })

BROWSER = REPO_ROOT / "cypher" / "browser"
FILES = sorted(BROWSER.glob("*.cypher"))
FIX = Path(__file__).parent / "fixtures" / "ingest"
SAMPLE = "pq2h_questions-0"  # "which nationality is frederica_of_mecklenburg-strelitz 's couple ?"
_PARAM = re.compile(r"^(//\s*)?:param\s+(\w+)\s*=>\s*(.+?);?\s*$")


def parse(path: Path) -> tuple[str, dict[str, Any], dict[str, Any], str]:
    """(what it shows, the params as pasted, the example params of the comments, the Cypher itself)."""
    pasted: dict[str, Any] = {}
    examples: dict[str, Any] = {}
    comments: list[str] = []
    body: list[str] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        match = _PARAM.match(line.strip())
        if match:
            value = ast.literal_eval(match[3].replace("null", "None"))
            (examples if match[1] else pasted)[match[2]] = value
        elif line.startswith("//"):
            comments.append(line[2:].strip())
        elif line.strip():
            body.append(line)
    assert len(comments) == 1, f"{path.name}: one line saying what it shows, got {comments}"
    return comments[0], pasted, examples, "\n".join(body)


def graph_items(records: list[neo4j.Record]) -> tuple[set[str], set[str]]:
    """Element ids of every node and relationship in the records (inside lists and paths too)."""
    nodes: set[str] = set()
    rels: set[str] = set()

    def walk(value: Any) -> None:
        if isinstance(value, neo4j.graph.Node):
            nodes.add(value.element_id)
        elif isinstance(value, neo4j.graph.Relationship):
            rels.add(value.element_id)
            walk(value.start_node)
            walk(value.end_node)
        elif isinstance(value, neo4j.graph.Path):
            for item in (*value.nodes, *value.relationships):
                walk(item)
        elif isinstance(value, list | tuple):
            for item in value:
                walk(item)

    for record in records:
        walk(list(record.values()))
    return nodes, rels


@pytest.fixture(scope="module")
def fixture_graph(request: pytest.FixtureRequest, backend: Backend,
                  tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Settings, neo4j.Driver]]:
    """A small corpus ingested (no LLM) and the webqsp + pq2h KG fixtures loaded, in one database."""
    corpus = tmp_path_factory.mktemp("browser_corpus")
    for name in ("notes.txt", "guide.md", "extra.jsonl"):
        shutil.copy(FIX / name, corpus / name)
    settings = backend.settings(f"t_browser_{uuid.uuid4().hex[:8]}")
    backend.claim(settings.graph_name)
    services = build_services(settings, start_embedded=False)

    def build() -> None:
        ingest_path(services, corpus, IngestOptions(llm_relations=False, checkpoint=False))
        load_path(services.store, ROG, "webqsp")
        load_path(services.store, PQ_QUESTIONS, "pq2h", kb=PQ_KB)  # 60 PathQuestion samples
        # KG_FACT edges are not written at load: the samples the queries draw get theirs on demand,
        # as `neorag kg browse` does (the first sample by key: what kg_sample / kg_action_path show as pasted)
        first = q(services.store, "MATCH (k:KGSample) RETURN k.dataset AS d, k.sample_id AS s "
                                  "ORDER BY k.key LIMIT 1")[0]
        for dataset, sample in ((first["d"], first["s"]), ("webqsp", "WebQTrn-1"), ("pq2h", SAMPLE)):
            assert write_sample_edges(services.store, dataset, sample) > 0

    auth = (settings.neo4j_user, settings.neo4j_password)
    driver = neo4j.GraphDatabase.driver(settings.neo4j_uri, auth=auth)
    try:
        with backend.shared_graph(request, settings, build):
            yield settings, driver
    finally:
        driver.close()
        services.close()


def run(driver: neo4j.Driver, cypher: str, params: dict[str, Any]) -> list[neo4j.Record]:
    records, _, _ = driver.execute_query(cypher, params, routing_=neo4j.RoutingControl.READ)  # type: ignore[arg-type]
    return records


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_file_shape_params_as_pasted_are_null(path: Path) -> None:
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines[0].startswith("// :param "), f"{path.name} starts with its // :param lines"
    what, pasted, examples, cypher = parse(path)
    assert what and set(pasted) == set(examples), "every parameter has a :param line and an example"
    assert all(v is None for v in pasted.values()), "as pasted, every parameter falls back (null)"
    assert all(f"${name}" in cypher for name in pasted)


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_runs_as_pasted_and_draws_a_graph(path: Path, fixture_graph: tuple[Settings, neo4j.Driver]) -> None:
    _, pasted, _, cypher = parse(path)
    nodes, rels = graph_items(run(fixture_graph[1], cypher, pasted))
    assert nodes and rels, f"{path.name} as pasted: {len(nodes)} nodes, {len(rels)} relationships"


def test_each_query_with_parameters(fixture_graph: tuple[Settings, neo4j.Driver], backend: Backend) -> None:
    settings, driver = fixture_graph
    store = backend.open_store(settings)
    try:
        doc = q(store, "MATCH (d:Document)-[:HAS_CHUNK]->(c:Chunk) WITH d, count(c) AS n ORDER BY n, d.id "
                       "RETURN d.id AS id LIMIT 1")[0]["id"]  # the smallest document, not the fallback
        chunks = [r["id"] for r in q(store, "MATCH (c:Chunk)-[:MENTIONS]->() RETURN DISTINCT c.id AS id "
                                            "ORDER BY id LIMIT 2")]
    finally:
        store.close()
    cases: dict[str, tuple[dict[str, Any], str]] = {
        "schema_overview": ({"labels": ["KGSample", "KGEntity"]}, "KGSample"),
        "document_chunks": ({"doc_id": doc}, doc),
        "entity_neighbourhood": ({"entity": "Justin Bieber"}, "Justin Bieber"),
        "evidence_subgraph": ({"chunk_ids": chunks}, chunks[0]),
        "kg_sample": ({"dataset": "webqsp", "sample_id": "WebQTrn-1"}, "WebQTrn-1"),
        "kg_action_path": ({"dataset": "pq2h", "sample_id": SAMPLE, "entity": None, "relation": None},
                           SAMPLE),
    }
    assert set(cases) == {p.stem for p in FILES}
    for path in FILES:
        params, expected = cases[path.stem]
        records = run(driver, parse(path)[3], params)
        nodes, rels = graph_items(records)
        assert nodes and rels, path.name
        assert expected in str([r.values() for r in records]), f"{path.name} shows {expected}"


def test_kg_action_path_follows_one_relation(fixture_graph: tuple[Settings, neo4j.Driver]) -> None:
    """What get_tail_entities(frederica..., spouse) walked in its PathQuestion sample: one fact edge."""
    cypher = parse(BROWSER / "kg_action_path.cypher")[3]
    params = {"dataset": "pq2h", "sample_id": SAMPLE, "entity": "frederica_of_mecklenburg-strelitz",
              "relation": "spouse"}
    records = run(fixture_graph[1], cypher, params)
    facts = {(p.start_node["name"], p.relationships[0]["relation"], p.end_node["name"])
             for p in (r["p"] for r in records)}
    assert facts and all(rel == "spouse" for _, rel, _ in facts)
    assert any("frederica_of_mecklenburg-strelitz" in (h, t) for h, _, t in facts)


GRASS = BROWSER / "neorag.grass"
_BLOCK = re.compile(r"(node|relationship)(?:\.(\w+))?\s*\{((?:[^{}]|\{\w+\})*)\}")  # captions hold {prop}


def grass_captions() -> dict[tuple[str, str], str]:
    """(node | relationship, label or type) -> caption of each styled block of cypher/browser/neorag.grass."""
    out: dict[tuple[str, str], str] = {}
    for kind, name, body in _BLOCK.findall(GRASS.read_text(encoding="utf-8")):
        caption = re.search(r"caption:\s*'([^']*)'", body)
        assert caption, f"{kind}.{name or '*'} has a caption"
        out[(kind, name or "*")] = caption[1]
    return out


def test_style_names_known_labels_and_types() -> None:
    """Every styled label / type is one docs/SCHEMA.md documents (a typo styles nothing)."""
    schema = (REPO_ROOT / "docs" / "SCHEMA.md").read_text(encoding="utf-8")
    captions = grass_captions()
    assert ("node", "*") in captions and ("relationship", "*") in captions
    for kind, name in captions:
        if name != "*":
            assert (f":{name} " in schema or f":{name}]" in schema or f":{name})" in schema
                    or f":{name}|" in schema), f"{kind}.{name} is not in docs/SCHEMA.md"


def test_style_captions_every_label_with_a_property_it_has(
        fixture_graph: tuple[Settings, neo4j.Driver]) -> None:
    """In the fixture graph, every label and relationship type has its own caption, and every property a
    caption shows is set on every node / relationship of it (Browser would show an empty caption)."""
    driver = fixture_graph[1]
    captions = grass_captions()
    labels = [r["label"] for r in run(driver, "CALL db.labels() YIELD label RETURN label", {})]
    types = [r["relationshipType"] for r in
             run(driver, "CALL db.relationshipTypes() YIELD relationshipType RETURN relationshipType", {})]
    assert {"Chunk", "Entity", "KGSample", "KGEntity"} <= set(labels) and "KG_FACT" in types
    for kind, names, pattern in (("node", labels, "MATCH (x:`{}`)"), ("relationship", types,
                                                                        "MATCH ()-[x:`{}`]->()")):
        for name in names:
            caption = captions.get((kind, name))
            assert caption, f"{kind}.{name} has no caption in neorag.grass"
            for prop in re.findall(r"\{(\w+)\}", caption):
                cypher = pattern.format(name) + f" WHERE x.`{prop}` IS NULL RETURN count(x) AS n"
                missing = run(driver, cypher, {})[0]["n"]
                assert missing == 0, f"{kind}.{name}: {missing} without {prop} (caption {caption!r})"
