"""The MCP server with the official SDK's own client: ``neorag mcp`` spawned over stdio, and ``/mcp``
on a real uvicorn over streamable HTTP. Tool list, every tool's call, and clear tool errors."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

from mcp import Client
from mcp.client.stdio import StdioServerParameters

from app.core.config import Settings
from ingest.kg.loader import load_records
from ingest.kg.records import KGRecord
from tests.browser.server import live_server
from tests.support.backends import Backend
from tests.support.graphs import LEAGUE_DOCS, write_docs

TOOLS = {
    "query",
    "retrieve_passages",
    "get_relations",
    "get_head_entities",
    "get_tail_entities",
    "graph_neighbourhood",
    "ingest",
}
TRIPLES = [
    ("Justin Bieber", "music.artist.album", "My World"),
    ("Justin Bieber", "music.artist.album", "Believe"),
    ("Jeremy Bieber", "people.person.children", "Justin Bieber"),
]


def _load_kg(store: Any) -> None:
    load_records(
        store, "webqsp", [KGRecord(sample_id="WebQTrn-0", triples=TRIPLES, q_entity=["Justin Bieber"])]
    )


def _data(result: Any) -> Any:
    """A tool result's structured content (the SDK wraps a dict return as is), else its JSON text."""
    assert not result.is_error, result.content
    if result.structured_content is not None:
        return result.structured_content
    return json.loads(result.content[0].text)


def _error(result: Any) -> str:
    assert result.is_error, result
    return str(result.content[0].text)


async def _exercise(client: Client, root: Path) -> None:
    """Every tool once (ingest first), then calls that must fail with a clear message."""
    tools = await client.list_tools()
    assert {t.name for t in tools.tools} == TOOLS
    by_name = {t.name: t for t in tools.tools}
    assert "question" in by_name["query"].input_schema["properties"]
    assert all(t.description for t in tools.tools)

    counts = _data(await client.call_tool("ingest", {"path": str(root / "docs")}))
    assert counts["files_processed"] == len(LEAGUE_DOCS) and counts["chunks_total"] >= 3
    answer = _data(
        await client.call_tool("query", {"question": "Where did Harald Hardrada die?", "top_k": 3})
    )
    assert answer["mode"] == "extractive" and "[S" in answer["answer"]
    assert [s["label"] for s in answer["sources"]] == ["S1", "S2", "S3"]
    assert any("Stamford Bridge" in (s["text"] or "") for s in answer["sources"])
    passages = _data(
        await client.call_tool("retrieve_passages", {"query": "Super Bowl in February", "top_k": 2})
    )
    assert len(passages["passages"]) == 2 and "Super Bowl" in passages["passages"][0]["contents"]
    graph = _data(await client.call_tool("graph_neighbourhood", {"entity": "Harald Hardrada", "limit": 20}))
    assert "e:harald hardrada" in {n["id"] for n in graph["nodes"]} and graph["edges"]
    rels = _data(
        await client.call_tool(
            "get_relations", {"dataset": "webqsp", "sample_id": "WebQTrn-0", "entity": "Justin Bieber"}
        )
    )
    assert rels["relations"] == ["music.artist.album", "people.person.children"]
    tails = _data(
        await client.call_tool(
            "get_tail_entities",
            {
                "dataset": "webqsp",
                "sample_id": "WebQTrn-0",
                "entity": "Justin Bieber",
                "relation": "music.artist.album",
            },
        )
    )
    assert tails["tail_entities"] == ["Believe", "My World"]
    heads = _data(
        await client.call_tool(
            "get_head_entities",
            {
                "dataset": "webqsp",
                "sample_id": "WebQTrn-0",
                "entity": "Justin Bieber",
                "relation": "people.person.children",
            },
        )
    )
    assert heads["head_entities"] == ["Jeremy Bieber"]

    assert "question" in _error(await client.call_tool("query", {"question": "   "}))
    assert "top_k" in _error(await client.call_tool("query", {"question": "x", "top_k": 0}))
    assert "outside the ingest roots" in _error(await client.call_tool("ingest", {"path": "/etc"}))
    assert "could not be loaded" in _error(
        await client.call_tool(
            "get_relations", {"dataset": "webqsp", "sample_id": "WebQTrn-404", "entity": "Justin Bieber"}
        )
    )
    assert "no entity named" in _error(
        await client.call_tool("graph_neighbourhood", {"entity": "Nobody Here"})
    )
    assert "entity" in _error(
        await client.call_tool("get_relations", {"dataset": "webqsp", "sample_id": "x"})
    )


def test_stdio_server_spawned_as_a_subprocess(settings: Settings, store: Any, backend: Backend,
                                               tmp_path: Path) -> None:
    _load_kg(store)
    write_docs(tmp_path / "docs", LEAGUE_DOCS)
    env = {
        **os.environ,
        **backend.env(settings),
        "NEORAG_INGEST_ROOTS": json.dumps([str(tmp_path)]),
        "NEORAG_LLM_BASE_URL": "",
        "NEORAG_EMBEDDING_QUERY_PRECISION": "fp32",
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
    }
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "app.cli", "mcp"],
        env=env,
        cwd=str(Path(__file__).resolve().parents[1]),
    )

    async def run() -> None:
        async with Client(params, read_timeout_seconds=300) as client:
            await _exercise(client, tmp_path)

    asyncio.run(run())


def test_streamable_http_on_a_real_server(settings: Settings, store: Any, tmp_path: Path) -> None:
    _load_kg(store)
    write_docs(tmp_path / "docs", LEAGUE_DOCS)
    own = settings.model_copy(update={"ingest_roots": [tmp_path]})
    with live_server(own) as live:

        async def run() -> None:
            async with Client(f"{live.url}/mcp", read_timeout_seconds=300) as client:
                await _exercise(client, tmp_path)

        asyncio.run(run())
    shutil.rmtree(tmp_path / "docs")


def test_store_down_is_a_clear_tool_error(tmp_path: Path, backend: Backend) -> None:
    """The store going away mid-session: each tool answers an error naming the store and what to do."""
    with backend.stoppable(tmp_path) as (switch, settings), live_server(settings) as live:
        switch.stop()

        async def run() -> None:
            async with Client(f"{live.url}/mcp", read_timeout_seconds=120) as client:
                for tool, args in (("query", {"question": "Who founded the league?"}),
                                   ("retrieve_passages", {"query": "league"}),
                                   ("graph_neighbourhood", {"entity": "NFL"})):
                    message = _error(await client.call_tool(tool, args))
                    assert f"{backend.version_prefix} at" in message, (tool, message)
                    assert "unreachable" in message and "->" in message  # what happened, what to do
                    assert "Traceback" not in message

        asyncio.run(run())
