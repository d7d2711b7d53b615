"""Bad input never gives a 5xx, and never costs the keep-alive connection: a real uvicorn on a free port,
one ``http.client`` connection sending each bad request followed by a good one on the same socket."""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import pytest
from fastapi import FastAPI

from app.api.main import create_app
from app.api.security import READ, access
from app.core.config import Settings
from app.services.container import build_services
from tests.browser.server import LiveServer, live_server

JSON = {"Content-Type": "application/json"}
ITEM = {"action_type": "get_relations", "dataset_name": "webqsp", "sample_id": "s1", "entity_id": "e"}


@pytest.fixture(scope="module")
def served(falkor_server: Any) -> Iterator[LiveServer]:
    settings = Settings(backend="embedded", falkor_data_dir=falkor_server.data_dir,
                        falkor_port=falkor_server.port, graph_name="limits_test", llm_base_url=None)
    app: FastAPI = create_app(settings, services_factory=lambda s: build_services(s, start_embedded=False))

    @access(READ)
    def broken() -> None:  # a bug in some endpoint: JSON 500, connection kept
        raise RuntimeError("simulated bug")

    app.add_api_route("/x/broken", broken, methods=["GET"])
    with live_server(settings, app=app) as server:
        yield server


@pytest.fixture
def conn(served: LiveServer) -> Iterator[http.client.HTTPConnection]:
    parts = urlsplit(served.url)
    connection = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=60)
    yield connection
    connection.close()


def _send(conn: http.client.HTTPConnection, method: str, path: str, body: bytes | None = None,
          headers: dict[str, str] | None = None) -> tuple[int, dict[str, Any] | list[Any], dict[str, str]]:
    conn.request(method, path, body=body, headers=headers or {})
    resp = conn.getresponse()
    raw = resp.read()
    assert resp.getheader("content-type", "").startswith("application/json"), raw[:200]
    return resp.status, json.loads(raw), {k.lower(): v for k, v in resp.getheaders()}


def _still_alive(conn: http.client.HTTPConnection, sock: Any) -> None:
    status, body, headers = _send(conn, "GET", "/health")
    assert status == 200 and body["status"] == "ok"  # type: ignore[call-overload]
    assert conn.sock is sock, "the server closed the keep-alive connection after the error"
    assert headers.get("connection", "keep-alive").lower() != "close"


DEEP = b"[" * 100_000 + b"]" * 100_000
BAD_REQUESTS: list[tuple[str, str, str, bytes | None, dict[str, str], int, str]] = [
    ("deep JSON list", "POST", "/retrieve", DEEP, JSON, 422, "nested deeper than 64"),
    ("deep JSON object", "POST", "/query", b'{"a":' * 50_000 + b"1" + b"}" * 50_000, JSON, 422, "deeper"),
    ("deep, as text/plain", "POST", "/retrieve", DEEP, {"Content-Type": "text/plain"}, 415, "Content-Type"),
    ("lone surrogate /query", "POST", "/query", b'{"question": "\\ud800 hi"}', JSON, 422, "surrogate"),
    ("lone low surrogate", "POST", "/ranking/preview", b'{"question": "a\\udc00"}', JSON, 422, "surrogate"),
    ("reversed pair", "POST", "/ranking/preview", b'{"question": "\\ude00\\ud83d"}', JSON, 422, "surrogate"),
    ("surrogate CoRAG", "POST", "/retrieve", b'{"query": "\\ud800"}', JSON, 422, "surrogate"),
    ("surrogate KG list", "POST", "/retrieve", b'[{"entity_id": "\\udbff"}]', JSON, 422, "surrogate"),
    ("surrogate ingest", "POST", "/ingest", b'{"path": "/data/\\ud800"}', JSON, 422, "surrogate"),
    ("surrogate in a key", "POST", "/evidence", b'{"\\ud800": 1, "question": "q"}', JSON, 422, "surrogate"),
    ("malformed JSON", "POST", "/query", b'{"question": "x",', JSON, 422, "not valid JSON"),
    ("invalid UTF-8", "POST", "/query", b'{"question": "\xff\xfe"}', JSON, 422, "UTF-8"),
    ("NaN", "POST", "/retrieve", b'[{"entity_id": NaN}]', JSON, 422, "NaN"),
    ("NUL in question", "POST", "/query", b'{"question": "a\\u0000b"}', JSON, 422, "control character"),
    ("10 MB context item", "POST", "/query",
     json.dumps({"question": "q", "context": ["x" * 10_000_000]}).encode(), JSON, 413,
     "NEORAG_MAX_BODY_BYTES"),
    ("100 kB context item", "POST", "/query",
     json.dumps({"question": "q", "context": ["x" * 100_000]}).encode(), JSON, 422,
     "NEORAG_QUERY_MAX_ITEM_CHARS"),
    ("big history content", "POST", "/query",
     json.dumps({"question": "q", "history": [{"role": "user", "content": "y" * 30_000}]}).encode(), JSON,
     422,
     "history[0].content"),
    ("NUL in chunk ids", "GET", "/ui/api/chunks?ids=ok&ids=a%00b", None, {}, 422, "control characters"),
    ("control char in chunk id", "GET", "/ui/api/chunks?ids=a%01", None, {}, 422, "control characters"),
    ("NUL in dataset", "GET", "/ui/api/kg/samples?dataset=web%00qsp", None, {}, 422, "control characters"),
    ("NUL in prefix", "GET", "/ui/api/kg/samples?dataset=webqsp&prefix=%00", None, {}, 422, "control"),
    ("NUL in sample id", "GET", "/ui/api/kg/sample?dataset=webqsp&sample_id=x%00", None, {}, 422, "control"),
    ("NUL in ingest path", "GET", "/ingest/stream?path=/data/a%00b", None, {}, 422, "control"),
    ("unhandled error", "GET", "/x/broken", None, {}, 500, "simulated bug"),
    ("unknown route", "POST", "/no-such-route", b"{}", JSON, 404, "Not Found"),
    ("wrong method", "DELETE", "/query", None, {}, 405, "Method Not Allowed"),
]


@pytest.mark.parametrize(("what", "method", "path", "body", "headers", "status", "fragment"), BAD_REQUESTS,
                         ids=[b[0] for b in BAD_REQUESTS])
def test_bad_request_is_a_clear_4xx_and_the_connection_survives(
        conn: http.client.HTTPConnection, what: str, method: str, path: str, body: bytes | None,
        headers: dict[str, str], status: int, fragment: str) -> None:
    _send(conn, "GET", "/health")
    sock = conn.sock
    got, answer, _ = _send(conn, method, path, body, headers)
    assert got == status, (what, answer)
    assert isinstance(answer, dict) and answer["error"] and fragment in answer["message"], (what, answer)
    _still_alive(conn, sock)


def test_oversized_chunked_body_is_413_before_it_is_all_read(conn: http.client.HTTPConnection) -> None:
    """No Content-Length: counted while streaming, refused at the limit, the connection still usable."""
    _send(conn, "GET", "/health")
    sock = conn.sock

    def chunks() -> Iterator[bytes]:
        yield b'{"question": "'
        for _ in range(9):
            yield b"x" * 1_000_000
        yield b'"}'

    conn.request("POST", "/query", body=chunks(), headers=JSON, encode_chunked=True)
    resp = conn.getresponse()
    answer = json.loads(resp.read())
    assert resp.status == 413 and answer["error"] == "body_too_large", answer
    _still_alive(conn, sock)


def test_one_bad_kg_item_gets_its_own_error_and_the_batch_is_answered(
        conn: http.client.HTTPConnection) -> None:
    items = [dict(ITEM, entity_id="a\x00b"), ITEM, dict(ITEM, sample_id="x\x00y"), {"action_type": "nope"},
             dict(ITEM, relation="r\x00", action_type="get_tail_entities"),
             dict(ITEM, entity_id="two\nlines\x1f")]
    for fmt in ("", "?format=chat"):
        status, answers, _ = _send(conn, "POST", "/retrieve" + fmt, json.dumps(items).encode(), JSON)
        assert status == 200 and isinstance(answers, list) and len(answers) == len(items)
        text = [json.dumps(a) for a in answers]
        assert "entity_id contains U+0000 (NUL)" in text[0]
        # answered normally: the seed's wording, or KG-R1's server's for a dataset it does not have
        assert "could not be loaded" in text[1] or "not supported (available" in text[1], text[1]
        assert "sample_id contains U+0000" in text[2]
        assert "Unsupported action_type" in text[3] or (fmt and "KG_FORMAT_ERROR" in text[3])  # KG-R1's
        assert "relation contains U+0000" in text[4]
        assert "KG_FORMAT_ERROR" not in text[5] and "U+" not in text[5]  # other characters: looked up


# --- issue 25: JSON must be UTF-8; numbers Python cannot convert ------------------------------------------
def _cesu8(text: str) -> bytes:
    """CESU-8: a character outside the BMP as its two UTF-16 surrogates, each encoded as 3 bytes."""
    out = b""
    for char in text:
        if ord(char) < 0x10000:
            out += char.encode("utf-8")
        else:
            high, low = divmod(ord(char) - 0x10000, 0x400)
            out += (chr(0xD800 + high) + chr(0xDC00 + low)).encode("utf-8", "surrogatepass")
    return out


ENCODINGS = {
    "utf-8 BOM": lambda t: b"\xef\xbb\xbf" + t.encode("utf-8"),
    "utf-16-le": lambda t: t.encode("utf-16-le"),
    "utf-16-be": lambda t: t.encode("utf-16-be"),
    "utf-16 BOM": lambda t: t.encode("utf-16"),
    "utf-32-le": lambda t: t.encode("utf-32-le"),
    "utf-32-be": lambda t: t.encode("utf-32-be"),
    "utf-32 BOM": lambda t: t.encode("utf-32"),
    "cesu-8": _cesu8,
    "overlong utf-8": lambda t: t.encode("utf-8").replace(b"/", b"\xc0\xaf").replace(b" ", b"\xc0\xa0"),
    "raw lone surrogate": lambda t: t.replace("\\ud800", "\ud800").encode("utf-8", "surrogatepass"),
}


def _bodies(text: str) -> list[tuple[str, str, Any]]:
    return [
        ("/query", "", {"question": text}),
        ("/query", "", {"question": text, "stream": True}),
        ("/query", "", {"question": "q", "context": [{"id": "c1", "text": text}]}),
        ("/ranking/preview", "", {"question": text}),
        ("/retrieve", "", [dict(ITEM, entity_id=text)]),
        ("/retrieve", "?format=chat", [dict(ITEM, entity_id=text)]),
        ("/retrieve", "", {"query": text}),
        ("/kg/query", "", {"query": f'get_relations("{text}")'}),
        ("/evidence", "", {"question": text}),
        ("/ingest", "", {"path": "/data/" + text}),
        ("/auth/stream-token", "", {"path": "/data/" + text}),
        ("/reason/corag", "", {"question": text}),
        ("/reason/structgpt", "", {"question": text}),
        ("/entities/merge", "", {"target": text, "sources": ["b"]}),
        ("/mcp", "", {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                      "params": {"name": "query", "arguments": {"question": text}}}),
    ]


# the example (ASCII once \ud800 is sent as an escape: in UTF-16/32 valid UTF-8 bytes but for the
# NULs), and one with non-ASCII characters, a non-BMP one included
JSON_BODIES = _bodies("x\ud800y") + _bodies("x\ud800y 🙂 / é")


@pytest.mark.parametrize("encoding", sorted(ENCODINGS))
def test_json_that_is_not_utf8_is_a_4xx_on_every_json_endpoint(conn: http.client.HTTPConnection,
                                                                encoding: str) -> None:
    """UTF-16/32 (with and without BOM), a UTF-8 BOM, CESU-8, overlong UTF-8, raw surrogates: refused
    before any parser sees them (json.loads would decode UTF-16/32 itself), the connection kept."""
    _send(conn, "GET", "/health")
    sock = conn.sock
    for path, query, body in JSON_BODIES:
        text = json.dumps(body, ensure_ascii=False).replace("\ud800", "\\ud800")
        raw = ENCODINGS[encoding](text)
        if raw == text.encode("utf-8"):
            continue  # CESU-8 of a text without characters outside the BMP is plain UTF-8
        headers = {**JSON, "Accept": "application/json, text/event-stream"}
        status, answer, _ = _send(conn, "POST", path + query, raw, headers)
        assert status == 422, (encoding, path, status, answer)
        assert isinstance(answer, dict) and answer["error"] == "invalid_request", answer
        assert answer["field"] == "body" and "UTF-8" in answer["message"], (encoding, path, answer)
        _still_alive(conn, sock)


def test_a_declared_charset_other_than_utf8_is_415(conn: http.client.HTTPConnection) -> None:
    _send(conn, "GET", "/health")
    sock = conn.sock
    raw = json.dumps({"question": "q"}).encode("utf-16")
    utf16 = {"Content-Type": "application/json; charset=utf-16"}
    status, answer, _ = _send(conn, "POST", "/query", raw, utf16)
    assert status == 415 and "UTF-8" in answer["message"], answer  # type: ignore[call-overload]
    _still_alive(conn, sock)
    status, answer, _ = _send(conn, "POST", "/retrieve", json.dumps([ITEM]).encode(),
                              {"Content-Type": 'application/json; charset="UTF-8"'})
    assert status == 200, answer


HUGE = "9" * 5000
HUGE_BODIES: list[tuple[str, str]] = [(path, body.replace("HUGE", HUGE)) for path, body in [
    ("/retrieve", "[HUGE]"),
    ("/retrieve", '{"query": "q", "top_k": HUGE}'),
    ("/retrieve", '[{"action_type": "get_relations", "entity_id": "e", "x": -HUGE}]'),
    ("/retrieve?format=chat", '[{"action_type": "get_relations", "entity_id": "e", "x": [HUGE]}]'),
    ("/query", '{"question": "q", "top_k": HUGE}'),
    ("/ranking/preview", '{"question": "q", "top_k": HUGE}'),
    ("/kg/query", '{"query": "get_relations(\\"e\\")", "top_k": HUGE}'),
    ("/evidence", '{"question": "q", "max_evidences": HUGE}'),
    ("/reason/corag", '{"question": "q", "top_k": HUGE}'),
    ("/ingest", '{"path": "/x", "unknown": HUGE.5e3}'),
]]


def test_integers_past_python_conversion_limit_are_400(conn: http.client.HTTPConnection) -> None:
    """More than 4,300 digits: json.loads cannot convert them (a ValueError, once a 500 on /retrieve)."""
    _send(conn, "GET", "/health")
    sock = conn.sock
    for path, raw in HUGE_BODIES:
        status, answer, _ = _send(conn, "POST", path, raw.encode(), JSON)
        assert status == 400, (path, status, answer)
        assert isinstance(answer, dict) and "5000 digits" in answer["message"], answer
        assert answer["error"] == "bad_request" and answer["field"] == "body", answer
        _still_alive(conn, sock)
    # the same digits inside a string are just text
    as_text = json.dumps([dict(ITEM, entity_id=HUGE)]).encode()
    status, answers, _ = _send(conn, "POST", "/retrieve", as_text, JSON)
    assert status == 200 and isinstance(answers, list) and len(answers) == 1, answers


@pytest.mark.parametrize("request_line",
                         [b"FOO /health HTTP/1.1", b"GET /health HTTP/9.9", b"GE\x01T / HTTP/1.1"])
def test_a_request_the_http_parser_refuses_is_a_json_400(served: LiveServer, request_line: bytes) -> None:
    """uvicorn answered a plain-text 400 for these (issue 25, item 9); `neorag serve` and its workers use
    the JSON protocol (uvicorn_options), as this server does."""
    import socket

    parts = urlsplit(served.url)
    with socket.create_connection((parts.hostname or "127.0.0.1", parts.port or 80), timeout=30) as sock:
        sock.sendall(request_line + b"\r\nHost: 127.0.0.1\r\n\r\n")
        raw = b""
        while chunk := sock.recv(65536):
            raw += chunk
    head, _, body = raw.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 400"), raw[:300]
    assert b"content-type: application/json" in head.lower(), head
    answer = json.loads(body)
    assert answer["error"] == "bad_request" and answer["message"].startswith("malformed HTTP request"), answer
