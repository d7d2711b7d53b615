"""POST /query (JSON, stream), POST /ranking/preview, caches, CoRAG /retrieve over a real ingested graph."""

from __future__ import annotations

import math
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from app.core.config import Settings
from app.retrieval.rerank_features import FEATURES
from app.retrieval.rerank_trees import tree_model
from app.services.container import Services
from tests.support.apps import app_client
from tests.support.backends import Backend
from tests.support.fake_openai import ScriptedOpenAI
from tests.support.retrieval_graph import ingested_graph

Q = "Who directed the film that was shot in or around Leland, North Carolina in 1986?"


@pytest.fixture(scope="module")
def graph(request: pytest.FixtureRequest, backend: Backend) -> Iterator[tuple[Settings, Services]]:
    with ingested_graph(request, backend) as pair:
        yield pair


@pytest.fixture(scope="module")
def client(graph: tuple[Settings, Services]) -> Iterator[Any]:
    with app_client(graph[0]) as c:
        yield c


def parse_stream(text: str) -> tuple[str, list[dict[str, Any]]]:
    """What the contract's client does: split on the last [SOURCES], read rank=, reason=, score= (a
    location, e.g. `, record=25` or `, lines=3-9`, may follow the score)."""
    body, sep, tail = text.rpartition("[SOURCES]")
    assert sep, "no [SOURCES] trailer"
    items = []
    for line in tail.strip().splitlines():
        m = re.match(r"- (\d+)\. (\S+) \(rank=(\d+), reason=(\w+), score=([0-9.]+)(?:, \w+=[\w-]+)*\)$", line)
        assert m, line
        items.append({"id": m[2], "rank": int(m[3]), "reason": m[4], "score": float(m[5])})
    return body, items


def test_ranking_preview_fields(client: Any) -> None:
    resp = client.post("/ranking/preview", json={"question": Q})
    assert resp.status_code == 200
    body = resp.json()
    assert body["question"] == Q and body["degraded"] is False and len(body["items"]) == 8
    # Wikipedia passages: the auto graph mode runs the multi-hop stage, and /diagnostics says why
    assert body["graph_mode"] == "multihop"
    corpus = client.get("/diagnostics").json()["retrieval"]["entity_graph"]
    assert corpus["auto_graph_mode"] == "multihop" and 1.0 <= corpus["chunks_per_title"] < 2.0
    assert corpus["title_links"] > 0.05
    for item in body["items"]:
        for key in (
            "id",
            "reason",
            "score_raw",
            "base_norm",
            "bonus",
            "composite_score",
            "final_score",
            "rel_type",
            "rel_conf",
        ):
            assert key in item
        assert item["composite_score"] == pytest.approx(item["base_norm"] + item["bonus"], abs=2e-6)
        # default multi-hop ranking: final = the feature reranker's score of the item's own features
        paired = ["pair", "coverage"] if item["pair_with"] else []
        assert list(item["features"]) == [*FEATURES, *paired]
        x = np.array([[item["features"][f] for f in FEATURES]])
        assert item["final_score"] == pytest.approx(float(tree_model().probabilities(x)[0]), abs=1e-4)
        # the contributions explain the score: bias + one share per feature = logit(final_score)
        assert list(item["contributions"]) == ["bias", *FEATURES]
        z = sum(item["contributions"].values())
        assert item["final_score"] == pytest.approx(1 / (1 + math.exp(-z)), abs=1e-4)
    first, second, *rest = body["items"]  # the pair stage's two, then the reranker's order
    assert (first["pair_with"], second["pair_with"]) == (second["id"], first["id"])
    assert first["features"]["pair"] == second["features"]["pair"]
    assert first["final_score"] >= second["final_score"] and all(i["pair_with"] is None for i in rest)
    finals = [i["final_score"] for i in rest]
    assert finals == sorted(finals, reverse=True)
    assert any(
        i["title"] == "Maximum Overdrive" or i["title"] == "Leland, North Carolina" for i in body["items"]
    )
    assert client.post("/ranking/preview", json={"question": Q, "top_k": 3}).json()["items"].__len__() == 3


def test_query_json_extractive_without_llm(client: Any) -> None:
    ctx = [
        {"id": "memo1", "text": "An external memo: Stephen King directed Maximum Overdrive in 1986."},
        "A plain snippet about Wilmington.",
    ]
    resp = client.post("/query", json={"question": Q, "stream": False, "context": ctx, "top_k": 4})
    assert resp.status_code == 200
    body = resp.json()
    assert body["mode"] == "extractive" and re.search(r"\[S\d+\]", body["answer"])
    assert [s["rank"] for s in body["sources"]] == [1, 2, 3, 4, 5, 6]
    ext = body["sources"][4:]
    assert [s["reason"] for s in ext] == ["external", "external"] and ext[0]["id"] == "memo1"
    assert ext[1]["id"] == "ext2"
    assert [r["label"] for r in body["references"]] == [f"S{i}" for i in range(1, 7)]
    assert {"type": "no_llm"} == {"type": body["warnings"][0]["type"]}
    assert any(w["type"] == "unused_sources" for w in body["warnings"])
    assert isinstance(body["entities"], list) and {"name", "freq"} <= set(body["entities"][0])


def test_query_stream_extractive_trailer(client: Any) -> None:
    resp = client.post("/query", json={"question": Q, "stream": True})
    assert resp.status_code == 200 and resp.headers["content-type"].startswith("text/plain")
    assert resp.headers["x-neorag-mode"] == "extractive"
    body, items = parse_stream(resp.text)
    assert re.search(r"\[S1\]|\[S2\]|\[S3\]", body) and "[ERROR]" not in body
    assert [i["rank"] for i in items] == list(range(1, 9))
    assert all(i["reason"] in ("vector", "bm25", "entity", "relates", "cooccur", "llm_rel") for i in items)
    assert items[0]["score"] >= items[-1]["score"]


def test_bad_input_names_the_field(client: Any) -> None:
    cases = [
        ({"question": "   "}, "question"),
        ({"stream": False}, "question"),
        ({"question": 5}, "question"),
        ({"question": "x" * 2001}, "question"),
        ({"question": "ok", "top_k": 0}, "top_k"),
        ({"question": "ok", "top_k": 101}, "top_k"),
        ({"question": "ok", "top_k": "5"}, "top_k"),
        ({"question": "ok", "context": "text"}, "context"),
        ({"question": "ok", "context": [3]}, "context[0]"),
        ({"question": "ok", "context": [{"id": "a"}]}, "context[0].text"),
        ({"question": "ok", "history": [{"role": "bot", "content": "x"}]}, "history[0].role"),
        ({"question": "ok", "history": [{"role": "user"}]}, "history[0].content"),
        ({"question": "ok", "history": ["hi"]}, "history[0]"),
        ({"question": "ok", "stream": "yes"}, "stream"),
    ]
    for body, field in cases:
        for path in ("/query", "/ranking/preview"):
            if path == "/ranking/preview" and field not in ("question", "top_k"):
                continue
            resp = client.post(path, json=body)
            assert resp.status_code == 422, (path, body, resp.text)
            assert resp.json()["field"] == field and field.split("[")[0] in resp.json()["message"]
    assert client.post("/query", json=["not", "an", "object"]).status_code == 422


def test_llm_mode_with_history_and_rewrite(graph: tuple[Settings, Services]) -> None:
    replies: list[Any] = [
        "Who directed Maximum Overdrive, the film shot in Leland, North Carolina?",
        "Stephen King directed it [S1].",
    ]
    with ScriptedOpenAI(replies) as llm:
        settings = graph[0].model_copy(update={"llm_base_url": llm.base_url})
        with app_client(settings) as c:
            history = [
                {"role": "user", "content": "Tell me about Maximum Overdrive."},
                {"role": "assistant", "content": "It is a 1986 film."},
            ]
            resp = c.post("/query", json={"question": "Who directed it?", "history": history})
            body = resp.json()
            assert resp.status_code == 200 and body["mode"] == "llm"
            assert body["answer"] == "Stephen King directed it [S1]."
            assert body["rewritten_question"].startswith("Who directed Maximum Overdrive")
            answer_prompt = llm.requests[1]["messages"]
            assert answer_prompt[1:3] == history and "[S1]" in answer_prompt[-1]["content"]
            assert "[S#]" in answer_prompt[0]["content"] or "[S1]" in answer_prompt[0]["content"]
            assert not any(w["type"] == "unused_sources" and "S1," in w["detail"] for w in body["warnings"])


def test_llm_stream_mode(graph: tuple[Settings, Services]) -> None:
    with ScriptedOpenAI(["Stephen King directed Maximum Overdrive [S1], shot in Leland [S2]."]) as llm:
        settings = graph[0].model_copy(update={"llm_base_url": llm.base_url})
        with app_client(settings) as c:
            resp = c.post("/query", json={"question": Q, "stream": True})
    assert resp.headers["x-neorag-mode"] == "llm"
    body, items = parse_stream(resp.text)
    assert body.strip() == "Stephen King directed Maximum Overdrive [S1], shot in Leland [S2]."
    assert len(items) == 8 and llm.requests[0]["stream"] is True


def test_llm_down_or_slow_falls_back_to_extractive(graph: tuple[Settings, Services]) -> None:
    with ScriptedOpenAI([{"status": 500}, {"status": 500}], default={"status": 500}) as llm:
        settings = graph[0].model_copy(update={"llm_base_url": llm.base_url, "llm_max_retries": 0})
        with app_client(settings) as c:
            resp = c.post("/query", json={"question": Q})
            body = resp.json()
            assert resp.status_code == 200 and body["mode"] == "extractive" and "[S" in body["answer"]
            assert any(w["type"] == "llm_unavailable" for w in body["warnings"])
            stream = c.post("/query", json={"question": Q, "stream": True})
            assert stream.status_code == 200 and stream.headers["x-neorag-mode"] == "extractive"
            assert parse_stream(stream.text)[1]
    with ScriptedOpenAI([], default={"sleep": 3, "content": "late [S1]"}) as slow:
        settings = graph[0].model_copy(
            update={"llm_base_url": slow.base_url, "llm_timeout_s": 0.5, "llm_max_retries": 0}
        )
        with app_client(settings) as c:
            body = c.post("/query", json={"question": Q}).json()
    assert body["mode"] == "extractive" and any(w["type"] == "llm_unavailable" for w in body["warnings"])


def test_caches_stats_clear_and_ingest_invalidation(graph: tuple[Settings, Services], tmp_path: Path) -> None:
    from app.retrieval.bm25 import lexical_index
    from app.retrieval.hybrid import lexical_search
    from ingest.options import IngestOptions
    from ingest.pipeline import ingest_path

    with ScriptedOpenAI([], default="Stephen King [S1].") as llm:
        settings = graph[0].model_copy(update={"llm_base_url": llm.base_url})
        with app_client(settings) as c:
            first = c.post("/query", json={"question": Q}).json()
            second = c.post("/query", json={"question": Q}).json()
            assert first["cached"] is False and second["cached"] is True and len(llm.requests) == 1
            other = c.post("/query", json={"question": Q, "context": ["extra"]}).json()
            assert other["cached"] is False and len(llm.requests) == 2
            c.post("/query", json={"question": Q, "stream": True})  # streams are never cached
            stats = c.get("/cache/stats", params={"texts": "true"}).json()  # no keys set: texts allowed
            assert stats["answer_cache_size"] == 2 and stats["embedding_cache_size"] >= 1
            assert any(k.startswith("question:") for k in stats["embedding_cache_keys"])
            assert any(k.startswith(Q[:30]) for k in stats["answer_cache_keys"])
            services = c.app.state.services  # type: ignore[attr-defined]
            note = tmp_path / "zanzibar_note.txt"
            note.write_text("The Zanzibar Quokka Festival is held every spring in Leland, North Carolina.")
            ingest_path(services, note, IngestOptions(llm_relations=False, checkpoint=False))
            assert c.get("/cache/stats").json()["answer_cache_size"] == 0  # the ingest listener cleared it
            index = lexical_index(services.extras, services.store)
            chunks = services.store.run("retrieval_chunk_count")[0]["chunks"]
            for _ in range(
                100
            ):  # stale after the ingest: rebuilt in the background, old index serves meanwhile
                if len(index.current()) == chunks:
                    break
                time.sleep(0.05)
            assert len(index.current()) == chunks
            assert lexical_search(services, "Zanzibar Quokka Festival", 3)
            top = c.post("/retrieve", json={"query": "Zanzibar Quokka Festival", "top_k": 1}).json()[
                "chunks"
            ][0]
            assert "Zanzibar Quokka" in top["contents"]
            assert c.post("/query", json={"question": Q}).json()["cached"] is False
            assert c.post("/cache/clear").json() == {"cleared": True}
            stats = c.get("/cache/stats").json()
            assert stats["answer_cache_size"] == 0 and stats["embedding_cache_size"] == 0
            diag = c.get("/diagnostics").json()["retrieval"]
            assert diag["weights"]["bm25"] == 0.4 and diag["fusion"] == "composite"


def test_corag_retrieve_object_body_both_shapes(client: Any) -> None:
    resp = client.post("/retrieve", json={"query": "Maximum Overdrive film Leland"})
    assert resp.status_code == 200
    chunks = resp.json()["chunks"]
    assert len(chunks) == 20 and {"id", "contents", "title", "score"} <= set(chunks[0])
    assert any("Maximum Overdrive" in c["contents"] for c in chunks[:5])
    bare = client.post(
        "/retrieve?shape=list", json={"query": "Maximum Overdrive film Leland", "top_k": 3}
    ).json()
    assert isinstance(bare, list) and len(bare) == 3 and bare[0]["id"] == chunks[0]["id"]
    for body, field in (
        ({"query": " "}, "query"),
        ({"top_k": 3}, "query"),
        ({"query": "x", "top_k": 0}, "top_k"),
        ({"query": "x", "top_k": "3"}, "top_k"),
        ({"query": "x" * 2001}, "query"),
    ):
        r = client.post("/retrieve", json=body)
        assert r.status_code == 422 and r.json()["field"] == field, (body, r.text)


def test_empty_graph_is_200_with_warning(settings: Settings) -> None:
    with app_client(settings) as c:
        body = c.post("/query", json={"question": "What is in the graph?"}).json()
        assert body["sources"] == [] and any(w["type"] == "empty_graph" for w in body["warnings"])
        _, items = parse_stream(c.post("/query", json={"question": "anything?", "stream": True}).text)
        assert items == []
        preview = c.post("/ranking/preview", json={"question": "anything?"}).json()
        assert preview["items"] == [] and preview["warnings"][0]["type"] == "empty_graph"
        assert c.post("/retrieve", json={"query": "anything"}).json() == {"chunks": []}


def test_store_down_is_503_with_hint(tmp_path: Path, backend: Backend) -> None:
    with backend.stoppable(tmp_path) as (server, settings), app_client(settings) as c:
        server.stop()
        for path, body in (
            ("/query", {"question": "q?"}),
            ("/ranking/preview", {"question": "q?"}),
            ("/query", {"question": "q?", "stream": True}),
            ("/retrieve", {"query": "q"}),
        ):
            resp = c.post(path, json=body)
            assert resp.status_code == 503, (path, resp.text)
            assert resp.json()["error"] == "store_unavailable" and resp.json()["hint"]


def test_internal_failure_is_500_query_failed(graph: tuple[Settings, Services], tmp_path: Path) -> None:
    import shutil

    lib = tmp_path / "cypher"
    shutil.copytree(graph[0].cypher_dir, lib)
    (lib / "retrieval_chunk_mentions.cypher").unlink()  # the entity graph of multi-hop retrieval
    with app_client(graph[0].model_copy(update={"cypher_dir": lib})) as c:
        resp = c.post("/query", json={"question": Q})
    assert resp.status_code == 500
    assert resp.json()["error"] == "query_failed" and "retrieval_chunk_mentions" in resp.json()["message"]


MID_ANSWER = "Stephen King directed Maximum Overdrive [S1], shot in Leland [S2]."


def test_llm_failing_mid_stream_over_http(graph: tuple[Settings, Services]) -> None:
    """A real uvicorn server and HTTP client: the partial answer, one inline [ERROR] line, the trailer."""
    import httpx

    from tests.browser.server import live_server

    modes = ("drop", "malformed", "error")
    replies: list[Any] = [{"content": MID_ANSWER, "fail_after_chunks": 3, "fail_mode": m} for m in modes]
    with ScriptedOpenAI(replies, default={"status": 500}) as llm:
        settings = graph[0].model_copy(update={"llm_base_url": llm.base_url, "llm_max_retries": 0})
        texts = []
        with live_server(settings) as live:
            for _ in modes:
                with httpx.stream("POST", live.url + "/query", json={"question": Q, "stream": True},
                                  timeout=60) as resp:
                    assert resp.status_code == 200 and resp.headers["x-neorag-mode"] == "llm"
                    texts.append("".join(resp.iter_text()))
    assert len(llm.requests) == len(modes)
    for mode, text in zip(modes, texts, strict=True):
        body, items = parse_stream(text)  # the contract's client still finds every source
        assert len(items) == 8 and [i["rank"] for i in items] == list(range(1, 9)), mode
        answer, sep, error = body.partition("\n[ERROR] ")
        assert sep, (mode, text)
        assert answer == MID_ANSWER[:21], mode  # the three deltas sent before the failure, nothing more
        message, newline, rest = error.partition("\n")
        assert newline and message.strip() and "LLM" in message, (mode, message)
        assert rest.strip() == "" and "[ERROR]" not in rest, mode  # then only the trailer's blank lines
