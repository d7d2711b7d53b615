"""GET /graph (entity, document, KG sample, node expansion, answer), GET /graph/node and POST /query
include_graph through the real app on the real store: shapes, stable ids, limits, 4xx and 503."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from app.core.config import Settings
from ingest.kg.loader import load_records
from ingest.kg.records import KGRecord
from tests.support.apps import app_client, stoppable_store
from tests.support.graphs import HUB, build_hub, expected_cooccurs, ingest_docs


def _check_shape(body: dict[str, Any]) -> tuple[dict[str, dict[str, Any]], list[dict[str, Any]]]:
    """Every node has id/label/name, ids are unique, every edge joins two returned nodes."""
    nodes = {n["id"]: n for n in body["nodes"]}
    assert len(nodes) == len(body["nodes"])
    assert all(n["label"] and isinstance(n["name"], str) for n in body["nodes"])
    for e in body["edges"]:
        assert e["source"] in nodes and e["target"] in nodes and e["type"], e
    assert isinstance(body["truncated"], bool)
    return nodes, body["edges"]


def test_entity_graph_depth_expansion_and_stable_ids(settings: Settings, tmp_path: Path) -> None:
    with app_client(settings) as c:
        ingest_docs(c.app.state.services, tmp_path / "docs")  # type: ignore[attr-defined]
        first = c.get("/graph", params={"entity": "harald hardrada"})
        assert first.status_code == 200, first.text
        nodes, edges = _check_shape(first.json())
        center = nodes["e:harald hardrada"]
        assert (
            center["center"] is True and center["label"] == "Entity" and center["name"] == "Harald Hardrada"
        )
        assert first.json()["entry"]["id"] == "harald hardrada"
        chunks = [n for n in nodes.values() if n["label"] == "Chunk"]
        assert chunks and all(n["preview"] for n in chunks)
        mention_edges = [e for e in edges if e["type"] == "MENTIONS" and e["target"] == center["id"]]
        assert {e["source"] for e in mention_edges} == {n["id"] for n in chunks}
        assert any(e["type"] == "CO_OCCURS" and center["id"] in (e["source"], e["target"]) for e in edges)
        assert "e:nfl" in nodes  # a bounded CO_OCCURS partner (2 shared chunks, positive PMI)
        oracle = expected_cooccurs(c.app.state.services.store)  # type: ignore[attr-defined]
        partners = {b if a == "harald hardrada" else a for a, b in oracle if "harald hardrada" in (a, b)}
        assert partners and {f"e:{k}" for k in partners} <= set(nodes)
        again = c.get("/graph", params={"entity": "Harald Hardrada"}).json()
        assert {n["id"] for n in again["nodes"]} == set(nodes)  # same ids, any spelling of the name
        deeper = c.get("/graph", params={"entity": "harald hardrada", "depth": 2}).json()
        assert set(nodes) <= {n["id"] for n in deeper["nodes"]}
        # expanding a neighbour keeps the ids the page already has, so it can merge
        expanded = c.get("/graph", params={"node": "e:nfl"}).json()
        ids = {n["id"] for n in expanded["nodes"]}
        assert "e:nfl" in ids and "e:harald hardrada" in ids
        chunk_id = chunks[0]["id"]
        around_chunk = c.get("/graph", params={"node": chunk_id}).json()
        _, chunk_edges = _check_shape(around_chunk)
        kinds = {e["type"] for e in chunk_edges}
        assert {"MENTIONS", "HAS_CHUNK"} <= kinds
        small = c.get("/graph", params={"entity": "harald hardrada", "limit": 3}).json()
        assert len(small["nodes"]) <= 3 and small["truncated"] is True


def test_document_graph_has_chunks_in_order_and_their_entities(settings: Settings, tmp_path: Path) -> None:
    with app_client(settings) as c:
        ingest_docs(c.app.state.services, tmp_path / "docs")  # type: ignore[attr-defined]
        entity = c.get("/graph", params={"entity": "nfl"}).json()
        doc_ids = {n["doc_id"] for n in entity["nodes"] if n["label"] == "Chunk"}
        doc_id = sorted(doc_ids)[0]
        resp = c.get("/graph", params={"document": doc_id})
        assert resp.status_code == 200, resp.text
        nodes, edges = _check_shape(resp.json())
        doc = nodes[f"d:{doc_id}"]
        assert doc["label"] == "Document" and doc["center"] is True and doc["chunks"] >= 1
        chunk_nodes = [n for n in nodes.values() if n["label"] == "Chunk"]
        assert len(chunk_nodes) == doc["chunks"]
        assert {e["target"] for e in edges if e["type"] == "HAS_CHUNK"} == {n["id"] for n in chunk_nodes}
        assert any(e["type"] == "MENTIONS" for e in edges)
        if len(chunk_nodes) > 1:
            assert any(e["type"] == "NEXT" for e in edges)


def test_kg_sample_graph_topic_answers_focus_and_expansion(settings: Settings, store) -> None:  # type: ignore[no-untyped-def]
    triples = [
        ("Justin Bieber", "music.artist.album", "My World"),
        ("Justin Bieber", "music.artist.album", "Believe"),
        ("Justin Bieber", "people.person.sibling_s", "m.0gxnnwc"),
        ("m.0gxnnwc", "people.sibling_relationship.sibling", "Jaxon Bieber"),
        ("Jeremy Bieber", "people.person.children", "Justin Bieber"),
    ]
    load_records(
        store,
        "webqsp",
        [
            KGRecord(
                sample_id="WebQTrn-0",
                triples=triples,
                question="who is justin's brother",
                answers=["Jaxon Bieber"],
                q_entity=["Justin Bieber"],
                a_entity=["Jaxon Bieber"],
            )
        ],
    )
    with app_client(settings) as c:
        one = c.get("/graph", params={"dataset": "webqsp", "sample": "WebQTrn-0"})
        assert one.status_code == 200, one.text
        nodes, edges = _check_shape(one.json())
        sample = nodes["s:webqsp/WebQTrn-0"]
        assert sample["label"] == "KGSample" and sample["question"] == "who is justin's brother"
        topic = nodes["k:webqsp/WebQTrn-0|Justin Bieber"]
        assert topic["topic"] is True
        assert "k:webqsp/WebQTrn-0|Jaxon Bieber" not in nodes  # two hops away
        rels = {(e["source"], e.get("relation"), e["target"]) for e in edges if e["type"] == "KG_REL"}
        assert (
            "k:webqsp/WebQTrn-0|Justin Bieber",
            "music.artist.album",
            "k:webqsp/WebQTrn-0|Believe",
        ) in rels
        assert one.json()["truncated"] is True  # Jaxon Bieber is reachable but not shown at depth 1
        two = c.get("/graph", params={"dataset": "webqsp", "sample": "WebQTrn-0", "depth": 2}).json()
        nodes2, _ = _check_shape(two)
        assert nodes2["k:webqsp/WebQTrn-0|Jaxon Bieber"]["answer"] is True
        assert two["truncated"] is False
        focus = c.get(
            "/graph", params={"dataset": "webqsp", "sample": "WebQTrn-0", "focus": "jaxon bieber"}
        ).json()
        assert "k:webqsp/WebQTrn-0|m.0gxnnwc" in {n["id"] for n in focus["nodes"]}
        expanded = c.get("/graph", params={"node": "k:webqsp/WebQTrn-0|m.0gxnnwc"}).json()
        assert {n["id"] for n in expanded["nodes"]} == {
            "k:webqsp/WebQTrn-0|m.0gxnnwc",
            "k:webqsp/WebQTrn-0|Justin Bieber",
            "k:webqsp/WebQTrn-0|Jaxon Bieber",
        }
        details = c.get("/graph/node", params={"id": "k:webqsp/WebQTrn-0|m.0gxnnwc"}).json()
        assert details["label"] == "KGEntity" and len(details["triples"]) == 2
        missing = c.get("/graph", params={"dataset": "webqsp", "sample": "WebQTrn-404"})
        assert missing.status_code == 404 and missing.json()["field"] == "sample"


def test_hub_entity_is_bounded(settings: Settings, store) -> None:  # type: ignore[no-untyped-def]
    assert build_hub(store, chunks=50, per_chunk=100) == 5_000
    with app_client(settings) as c:
        for params in ({"entity": "AHub"}, {"entity": "ahub", "depth": 2}, {"node": f"e:{HUB}", "limit": 40}):
            body = c.get("/graph", params=params).json()
            nodes, edges = _check_shape(body)
            limit = int(params.get("limit", settings.graph_default_limit))  # type: ignore[call-overload]
            assert len(nodes) <= limit and len(edges) <= 4 * limit
            assert body["truncated"] is True
            assert f"e:{HUB}" in nodes
        capped = c.get("/graph", params={"entity": "AHub", "limit": settings.graph_max_limit}).json()
        assert len(capped["nodes"]) == settings.graph_max_limit and capped["truncated"] is True
        details = c.get("/graph/node", params={"id": f"e:{HUB}", "chunks": 3}).json()
        assert details["properties"]["chunks_total"] == 50 and len(details["chunks"]) == 3


def test_bad_input_is_a_clear_4xx(settings: Settings, tmp_path: Path) -> None:
    with app_client(settings) as c:
        ingest_docs(c.app.state.services, tmp_path / "docs")  # type: ignore[attr-defined]
        cases: list[tuple[dict[str, Any], int, str]] = [
            ({}, 422, "query"),
            ({"dataset": "webqsp"}, 422, "sample"),
            ({"sample": "WebQTrn-0"}, 422, "dataset"),
            ({"entity": "York", "depth": 3}, 422, "depth"),
            ({"entity": "York", "depth": "x"}, 422, "depth"),
            ({"entity": "York", "limit": 0}, 422, "limit"),
            ({"entity": "York", "limit": 10**6}, 422, "limit"),
            ({"entity": "  "}, 422, "entity"),
            ({"entity": "x" * 400}, 422, "entity"),
            ({"node": "zz"}, 422, "node"),
            ({"entity": "Nobody Here"}, 404, "entity"),
            ({"document": "doc-missing"}, 404, "document"),
            ({"node": "e:nobody here"}, 404, "node"),
            ({"node": "c:doc-x:0:y"}, 404, "node"),
            ({"answer": "0" * 32}, 404, "answer"),
        ]
        # several entry points: schema-valid, so a documented precedence instead of a 422 (issue 25, item
        # 10): the first of entity, document, dataset + sample, node, answer; the others named as ignored
        both = c.get("/graph", params={"entity": "Harald Hardrada", "document": "d", "focus": "x",
                                       "dataset": "webqsp", "answer": "0" * 32})
        assert both.status_code == 200, both.text
        entry = both.json()["entry"]
        assert entry["entity"] == "Harald Hardrada" and entry["ignored"] == ["document", "dataset", "focus",
                                                                              "answer"], entry
        missing = c.get("/graph", params={"document": "doc-missing", "node": "e:x"}).json()
        assert missing["field"] == "document"
        for params, status, field in cases:
            resp = c.get("/graph", params=params)
            assert resp.status_code == status, (params, resp.text)
            body = resp.json()
            assert body["field"] == field and body["message"], (params, body)
        for params, status in (
            ({"id": "zz"}, 422),
            ({"id": "e:nobody"}, 404),
            ({"id": "d:nope"}, 404),
            ({}, 422),
            ({"id": "e:york", "chunks": 99}, 422),
        ):
            resp = c.get("/graph/node", params=params)
            assert resp.status_code == status, (params, resp.text)
            assert resp.json()["error"] == "invalid_request"


def test_node_details_give_properties_and_chunk_texts(settings: Settings, tmp_path: Path) -> None:
    with app_client(settings) as c:
        ingest_docs(c.app.state.services, tmp_path / "docs")  # type: ignore[attr-defined]
        ent = c.get("/graph/node", params={"id": "e:york"}).json()
        assert ent["label"] == "Entity" and ent["properties"]["name"] == "York"
        assert ent["properties"]["freq"] == ent["properties"]["chunks_total"] >= 2
        assert ent["chunks"] and all("York" in ch["text"] for ch in ent["chunks"])
        chunk = c.get("/graph/node", params={"id": f"c:{ent['chunks'][0]['id']}"}).json()
        assert chunk["label"] == "Chunk" and "York" in chunk["chunks"][0]["text"]
        doc = c.get("/graph/node", params={"id": f"d:{chunk['properties']['doc_id']}"}).json()
        assert doc["label"] == "Document" and doc["chunks"]


def test_query_include_graph_json_and_stream(settings: Settings, tmp_path: Path) -> None:
    with app_client(settings) as c:
        ingest_docs(c.app.state.services, tmp_path / "docs")  # type: ignore[attr-defined]
        question = "Where did Harald Hardrada die?"
        body = c.post("/query", json={"question": question, "include_graph": True}).json()
        graph = body["graph"]
        nodes, edges = _check_shape(graph)
        q = [n for n in nodes.values() if n["label"] == "Question"]
        assert len(q) == 1 and q[0]["name"] == question
        assert graph["sources"] == [f"c:{s['id']}" for s in body["sources"] if f"c:{s['id']}" in nodes]
        assert len(graph["sources"]) == len(body["sources"]) > 0
        assert all(nodes[s]["answer_source"] is True and nodes[s]["rank"] >= 1 for s in graph["sources"])
        assert any(e["type"] == "ASKS_ABOUT" and e["target"] == "e:harald hardrada" for e in edges)
        assert any(e["type"] == "MATCHED" for e in edges)
        # every source is reached from the question: directly, or through an entity / seed chunk
        reached = {e["target"] for e in edges if e["source"] == q[0]["id"]}
        for _ in range(3):
            reached |= {e["target"] for e in edges if e["source"] in reached}
            reached |= {e["source"] for e in edges if e["target"] in reached and e["type"] == "MENTIONS"}
        assert set(graph["sources"]) <= reached
        plain = c.post("/query", json={"question": question}).json()
        assert "graph" not in plain
        with c.stream(
            "POST", "/query", json={"question": question, "stream": True, "include_graph": True}
        ) as r:
            text = "".join(r.iter_text())
            graph_id = r.headers["X-NeoRAG-Graph-Id"]
        trailer_ids = [line.split(" ")[2] for line in text.rsplit("[SOURCES]", 1)[1].strip().splitlines()]
        kept = c.get("/graph", params={"answer": graph_id}).json()
        assert kept["sources"] == [f"c:{i}" for i in trailer_ids]
        with c.stream("POST", "/query", json={"question": question, "stream": True}) as r:
            assert "X-NeoRAG-Graph-Id" not in r.headers
        bad = c.post("/query", json={"question": question, "include_graph": "yes"})
        assert bad.status_code == 422 and bad.json()["field"] == "include_graph"


def test_store_down_is_503_json(tmp_path: Path) -> None:
    with stoppable_store(tmp_path) as (server, own), app_client(own) as c:
        server.stop()
        for params in (
            {"entity": "York"},
            {"document": "d"},
            {"dataset": "w", "sample": "s"},
            {"node": "e:york"},
        ):
            resp = c.get("/graph", params=params)
            assert resp.status_code == 503, (params, resp.text)
            assert resp.json()["error"] == "store_unavailable" and resp.json()["hint"]
        for method, path, kwargs in (
            ("GET", "/graph/node", {"params": {"id": "e:york"}}),
            ("GET", "/entities/search", {"params": {"q": "yo"}}),
            ("GET", "/entities/duplicates", {}),
            ("POST", "/entities/merge", {"json": {"target": "a", "sources": ["b"]}}),
            ("POST", "/query", {"json": {"question": "q?", "include_graph": True}}),
        ):
            resp = c.request(method, path, **kwargs)
            assert resp.status_code == 503, (path, resp.text)
            assert resp.json()["error"] == "store_unavailable"
