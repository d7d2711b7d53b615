"""NeoRAG's ``?format=chat`` answers equal the real KG-R1 server's, recorded over the same data.

tests/fixtures/kg_r1_golden/golden.jsonl holds the real server's answers (README there: how, from which
commit) to ~1,000 requests over our fixture in KG-R1's own layout (data_kg/). The same folder is loaded
into NeoRAG through the KG-R1 layout loader and every request is replayed through HTTP. Compared: every
key of every answer object, in order; ``choices[0].message.content`` exactly, except the relation lists
the real server shuffles (get_relations_in / _out, flat format), which are compared as sets; volatile
values (``id``, ``created``, ``timestamp``, ``query_time``) by shape.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.core.config import KG_R1_LEGACY, Settings
from app.store.base import GraphStore
from ingest.kg.loader import load_path
from tests.support.apps import app_client

GOLDEN = Path(__file__).parent / "fixtures" / "kg_r1_golden"
DATA = GOLDEN / "data_kg"
ENABLED = ["get_relations", "get_relations_in", "get_relations_out", "get_entities_in", "get_entities_out",
           "get_conditional_relations"]  # KG_ENABLED_ACTIONS of the recording


def golden_rows() -> dict[str, list[dict[str, Any]]]:
    rows: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for line in (GOLDEN / "golden.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        rows[row["config"]].append(row)
    return rows


ROWS = golden_rows()


def shuffled(request: dict[str, Any], golden: dict[str, Any], fmt: str) -> bool:
    return (fmt == "flat" and request.get("action_type") in ("get_relations_in", "get_relations_out")
            and golden["success"])


def compare(request: dict[str, Any], got: dict[str, Any], want: dict[str, Any], fmt: str) -> list[str]:
    """Differences between one NeoRAG answer and the real server's (empty when equal)."""
    problems = []
    if list(got) != list(want):
        problems.append(f"keys {list(got)} != {list(want)}")
    if not (isinstance(got.get("id"), str) and got["id"].startswith("chatcmpl-") and len(got["id"]) == 33):
        problems.append(f"id {got.get('id')!r}")
    if not isinstance(got.get("created"), int) or not isinstance(got["kg_metadata"].get("timestamp"), float):
        problems.append("created / timestamp types")
    if ("query_time" in want) and not isinstance(got.get("query_time"), float):
        problems.append("query_time type")
    for key in ("object", "model", "success", "action", "usage", "system_fingerprint"):
        if got.get(key) != want[key]:
            problems.append(f"{key} {got.get(key)!r} != {want[key]!r}")
    meta_got = {k: v for k, v in got["kg_metadata"].items() if k != "timestamp"}
    meta_want = {k: v for k, v in want["kg_metadata"].items() if k != "timestamp"}
    if meta_got != meta_want:
        problems.append(f"kg_metadata {meta_got} != {meta_want}")
    (choice_got,), (choice_want,) = got["choices"], want["choices"]
    content_got, content_want = choice_got["message"]["content"], choice_want["message"]["content"]
    rest_got = {k: v for k, v in choice_got.items() if k != "message"}
    rest_want = {k: v for k, v in choice_want.items() if k != "message"}
    if rest_got != rest_want or list(choice_got["message"].items())[0] != ("role", "assistant"):
        problems.append(f"choice {choice_got} != {choice_want}")
    if shuffled(request, want, fmt):
        head_got, _, list_got = content_got.partition("\n")
        head_want, _, list_want = content_want.partition("\n")
        if head_got != head_want or sorted(list_got.split(", ")) != sorted(list_want.split(", ")):
            problems.append(f"content {content_got!r} != {content_want!r} (as sets)")
    elif content_got != content_want:
        problems.append(f"content {content_got!r} != {content_want!r}")
    return problems


def replay(client: TestClient, config: str, fmt: str) -> tuple[int, list[str]]:
    """Send every golden request of ``config``; (answers compared, differences)."""
    problems: list[str] = []
    compared = 0
    for row in ROWS[config]:
        if "get" in row:
            continue
        resp = client.post("/retrieve", json=row["request"], params={"format": "chat"})
        assert resp.status_code == 200, resp.text
        got = resp.json()
        assert len(got) == len(row["request"])
        if row["status"] == 422:  # the real server refuses the whole batch; NeoRAG only the item
            assert len(row["request"]) == 1
            problems += check_refused(client, row["request"][0], got[0], row["response"]["detail"][0]["msg"])
            compared += 1
            continue
        for request, answer, want in zip(row["request"], got, row["response"], strict=True):
            problems += [f"{config} {request}: {p}" for p in compare(request, answer, want, fmt)]
            compared += 1
    return compared, problems


def check_refused(client: TestClient, request: dict[str, Any], got: dict[str, Any],
                  message: str) -> list[str]:
    """A request its pydantic model refuses: NeoRAG answers the item with the message its client would
    show, except the legacy names, answered as the new name they stand for."""
    action = request.get("action_type")
    if action in KG_R1_LEGACY:
        canonical = {**request, "action_type": KG_R1_LEGACY[action]}
        same = client.post("/retrieve", json=[canonical], params={"format": "chat"}).json()[0]
        return [f"{request} (legacy name): {p}" for p in compare(canonical, got, same, "flat")]
    want = (got["choices"][0]["message"]["content"], got["kg_metadata"]["error_type"], got["success"])
    if want != (message, "KG_FORMAT_ERROR", False) or "query_time" in got:
        return [f"{request}: refused item answered {want}, expected {message!r}"]
    return []


def chat_settings(settings: Settings, fmt: str) -> Settings:
    return settings.model_copy(update={"kg_relation_format": fmt, "kg_chat_actions": ENABLED})


@pytest.mark.parametrize("fmt", ["flat", "full_indent", "mixed", "compact"])
def test_chat_answers_equal_the_real_server_with_entity_names(settings: Settings, store: GraphStore,
                                                               fmt: str) -> None:
    load_path(store, DATA, "webqsp")
    load_path(store, DATA, "CWQ")
    with app_client(chat_settings(settings, fmt)) as client:
        compared, problems = replay(client, f"text-{fmt}", fmt)
        if fmt == "flat":
            actions = client.get("/actions", params={"format": "chat"}).json()
            assert actions == next(r for r in ROWS["text-flat"] if "get" in r)["response"]
    assert compared >= (440 if fmt == "flat" else 90)
    assert not problems, f"{len(problems)} of {compared} answers differ:\n" + "\n".join(problems[:40])


def test_chat_answers_equal_the_real_server_with_mids(settings: Settings, store: GraphStore) -> None:
    load_path(store, DATA, "webqsp", entity_names="mid")
    load_path(store, DATA, "CWQ", entity_names="mid")
    with app_client(chat_settings(settings, "flat")) as client:
        compared, problems = replay(client, "mid-flat", "flat")
    assert compared >= 200
    assert not problems, f"{len(problems)} of {compared} answers differ:\n" + "\n".join(problems[:40])
