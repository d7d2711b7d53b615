"""The served OpenAPI document: typed bodies, one error model everywhere, declared access and security.

The schemathesis test checks the document against real answers; these check its shape and that the
mechanism covers routes added later (another engineer's endpoint gets the shared answers by default).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
from fastapi import FastAPI

from app.api.main import create_app
from app.api.openapi import ErrorBody, errors, ok
from app.api.openapi.models import Cleared
from app.api.security import READ, access
from app.core.config import Settings
from tests.support.apps import app_client

ERROR_REF = "#/components/schemas/ErrorBody"


def _doc(**settings: Any) -> tuple[FastAPI, dict[str, Any]]:
    app = create_app(Settings(_env_file=None, **settings))  # type: ignore[call-arg]
    return app, app.openapi()


def _operations(doc: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [(m.upper(), p, op) for p, item in doc["paths"].items() for m, op in item.items()]


def test_every_error_answer_uses_the_shared_error_model() -> None:
    _, doc = _doc()
    text = json.dumps(doc)
    assert "HTTPValidationError" not in text and "ValidationError" not in doc["components"]["schemas"]
    for key in ('"ge"', '"le"', '"gt"', '"lt"'):  # constraints pydantic could not translate
        assert key not in text, key
    for method, path, op in _operations(doc):
        assert op["x-neorag-access"] in ("public", "read", "write"), (method, path)
        codes = set(op["responses"])
        assert {"400", "500", "503"} <= codes and codes & {"200", "201"}, (method, path, codes)
        if method == "POST":
            assert {"413", "422", "403"} <= codes, (method, path, codes)
        if "requestBody" in op:
            assert "415" in codes
        for code, answer in op["responses"].items():
            if code[0] in "45" and not (path == "/health" and code == "503"):
                assert answer["content"]["application/json"]["schema"] == {"$ref": ERROR_REF}, (path, code)


def test_bodies_are_declared_and_typed() -> None:
    _, doc = _doc()
    schemas = doc["components"]["schemas"]

    def body(path: str) -> dict[str, Any]:
        content = doc["paths"][path]["post"]["requestBody"]["content"]
        schema: dict[str, Any] = content["application/json"]["schema"]
        return schema

    assert body("/query") == {"$ref": "#/components/schemas/QueryRequest"}
    assert schemas["QueryRequest"]["required"] == ["question"]
    assert schemas["QueryRequest"]["properties"]["question"]["maxLength"] == 2000
    assert set(schemas["QueryRequest"]["properties"]) == {"question", "stream", "top_k", "context", "history",
                                                                 "include_graph"}
    assert body("/ranking/preview") == {"$ref": "#/components/schemas/RankingPreviewRequest"}
    retrieve = schemas["RetrieveRequest"]["anyOf"]
    assert retrieve[0]["type"] == "array"
    assert retrieve[0]["items"] == {"$ref": "#/components/schemas/KGAction"}
    assert retrieve[0]["maxItems"] == 10_000
    assert retrieve[1] == {"$ref": "#/components/schemas/PassagesRequest"}
    assert schemas["PassagesRequest"]["required"] == ["query"]
    answers = doc["paths"]["/retrieve"]["post"]["responses"]["200"]["content"]["application/json"]["schema"]
    assert len(answers["anyOf"]) == 3
    assert {p["name"] for p in doc["paths"]["/retrieve"]["post"]["parameters"]} == {"format", "shape"}
    assert body("/ingest") == {"$ref": "#/components/schemas/IngestRequest"}
    query_ok = doc["paths"]["/query"]["post"]["responses"]["200"]["content"]
    assert set(query_ok) == {"application/json", "text/plain"}


def test_limits_in_the_document_follow_the_settings() -> None:
    _, doc = _doc(query_max_question_chars=300, kg_max_batch=50, retrieval_max_top_k=7)
    schemas = doc["components"]["schemas"]
    assert schemas["QueryRequest"]["properties"]["question"]["maxLength"] == 300
    assert schemas["RetrieveRequest"]["anyOf"][0]["maxItems"] == 50
    assert schemas["PassagesRequest"]["properties"]["top_k"]["maximum"] == 7


def test_security_is_declared_only_when_keys_are_set() -> None:
    _, open_doc = _doc()
    assert "securitySchemes" not in open_doc["components"]
    assert all("401" not in op["responses"] and "security" not in op for _, _, op in _operations(open_doc))
    _, doc = _doc(api_keys="read:" + "r" * 20 + ",write:" + "w" * 20, public_read=True)
    assert set(doc["components"]["securitySchemes"]) == {"ApiKeyHeader", "BearerKey", "StreamToken"}
    assert doc["paths"]["/health"]["get"]["security"] == []
    assert {} in doc["paths"]["/diagnostics"]["get"]["security"]  # public read: no key needed
    assert {} not in doc["paths"]["/cache/clear"]["post"]["security"]
    assert "401" in doc["paths"]["/cache/clear"]["post"]["responses"]


def test_a_route_added_later_gets_the_shared_answers() -> None:
    app = create_app(Settings(_env_file=None))  # type: ignore[call-arg]

    @access(READ)
    def thing(thing_id: str) -> dict[str, str]:
        return {"id": thing_id}

    def delete_thing(thing_id: str) -> dict[str, bool]:
        return {"cleared": True}

    app.add_api_route("/things/{thing_id}", thing, methods=["GET"], response_model=None,
                      responses={**ok(Cleared), **errors(404)})
    app.add_api_route("/things/{thing_id}", delete_thing, methods=["DELETE"])
    doc = app.openapi()
    get, delete = doc["paths"]["/things/{thing_id}"]["get"], doc["paths"]["/things/{thing_id}"]["delete"]
    assert get["x-neorag-access"] == "read" and delete["x-neorag-access"] == "write"
    assert {"400", "404", "422", "500", "503"} <= set(get["responses"])
    assert {"403", "413", "422"} <= set(delete["responses"])
    assert get["responses"]["404"]["content"]["application/json"]["schema"] == {"$ref": ERROR_REF}
    assert get["responses"]["200"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/Cleared"}


def test_error_bodies_match_the_model_and_name_the_field(settings: Settings) -> None:
    with app_client(settings) as client:
        malformed = client.post("/query", content=b'{"question": "x",   ',
                                headers={"Content-Type": "application/json"})
        bad_type = client.post("/reason/corag", json={"question": "q", "top_k": "5"})
        missing = client.get("/ui/api/kg/sample")
        for resp in (malformed, bad_type, missing):
            assert resp.status_code == 422
            ErrorBody.model_validate(resp.json())
        assert malformed.json()["field"] == "body" and "not valid JSON" in malformed.json()["message"]
        assert "at character" in malformed.json()["message"]
        assert bad_type.json()["field"] == "top_k"
        assert {d["field"] for d in missing.json()["detail"]} == {"dataset", "sample_id"}
        integral = client.post("/ranking/preview", json={"question": "approval?", "top_k": 3.0})
        assert integral.status_code == 200  # 3.0 is an integer to JSON Schema, so to NeoRAG
        assert client.post("/reason/corag", json={"question": "q", "best_n": True}).status_code == 422


def test_ingest_stream_events_match_their_documented_schema(settings: Settings, tmp_path: Path) -> None:
    """OpenAPI before 3.2: the `schema` of text/event-stream describes one event as a client parses it
    (`{"event", "data", "id"?, "retry"?}`); it said `{"type": "string"}`, which no parsed event is (issue 25,
    item 10: schemathesis reported `{"data": "{}", "event": "start"} is not a string`)."""
    from schemathesis.core.deserialization import _parse_sse_events

    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("# A\n\nAlpha is a letter of the Greek alphabet.\n")
    with app_client(settings.model_copy(update={"ingest_roots": [tmp_path]})) as client:
        doc = client.get("/openapi.json").json()
        schema = doc["paths"]["/ingest/stream"]["get"]["responses"]["200"]["content"]["text/event-stream"]
        with client.stream("GET", "/ingest/stream", params={"path": str(tmp_path / "docs")}) as resp:
            assert resp.status_code == 200
            events = _parse_sse_events(resp.read())
    assert [e["event"] for e in events][:1] == ["start"] and any(e["event"] == "result" for e in events)
    for event in events:
        jsonschema.validate(event, schema["schema"])
        assert isinstance(json.loads(event["data"]), dict)
