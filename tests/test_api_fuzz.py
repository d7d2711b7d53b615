"""Fuzzing the JSON bodies and query parameters with hypothesis: whatever arrives, the answer is never a
5xx (503 only for the LLM that is deliberately not configured), and every error is the shared JSON shape.

Derandomized (the same examples every run); NEORAG_TEST_FUZZ_EXAMPLES and NEORAG_TEST_FUZZ_RANDOM=1 give
deeper, random runs.
"""

from __future__ import annotations

import http.client
import json
import os
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import urlsplit

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from app.core.config import Settings
from tests.browser.server import live_server
from tests.support.apps import app_client

EXAMPLES = int(os.environ.get("NEORAG_TEST_FUZZ_EXAMPLES", "40"))
FUZZ = hsettings(max_examples=EXAMPLES, deadline=None, database=None,
                 derandomize=os.environ.get("NEORAG_TEST_FUZZ_RANDOM") != "1",
                 suppress_health_check=list(HealthCheck))
NASTY = ["\ud800", "\udfff", "\ud83d\ude00", "\x00", "a\x00b", "\x1f", "\x7f", "\x85", "\u2028", " ", "",
         "\ufeff", "get_relations(\"x\")", 'get_triples("a", ["b"])', "webqsp", "../../etc/passwd", "%00",
         "x" * 3000, "🙂" * 50]
texts = st.one_of(st.text(max_size=40), st.sampled_from(NASTY),
                  st.text(alphabet=st.characters(codec="utf-8", exclude_categories=()), max_size=20),
                  st.lists(st.sampled_from(NASTY), max_size=4).map("".join))
scalars = st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70), texts,
                    st.floats(allow_nan=False, allow_infinity=False), st.sampled_from([0, 1, -1, 2.5, 1e300]))
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4)
                      | st.dictionaries(texts, inner, max_size=4), max_leaves=12)


def _obj(**fields: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Objects with these keys (each maybe absent) plus junk keys, or any JSON value at all."""
    known = st.fixed_dictionaries({}, optional={k: st.one_of(v, values) for k, v in fields.items()})
    junk = st.dictionaries(texts, values, max_size=2)
    return st.one_of(st.builds(lambda a, b: {**b, **a}, known, junk), values)


KG_ITEM = _obj(action_type=st.sampled_from(["get_relations", "get_tail_entities", "get_conditional_relations",
                                            "GET_RELATIONS", "nope"]),
               dataset_name=st.sampled_from(["webqsp", "", "x"]), sample_id=texts, entity_id=texts,
               relation=texts, concept=texts, _debug_batch_idx=st.integers())
BODIES: dict[str, st.SearchStrategy[Any]] = {
    "/query": _obj(question=texts, stream=st.booleans(), top_k=st.integers(-5, 200),
                   context=st.lists(st.one_of(texts, _obj(id=texts, text=texts, score=scalars)), max_size=3),
                   history=st.lists(_obj(role=st.sampled_from(["user", "system", "bot"]), content=texts),
                                    max_size=3)),
    "/ranking/preview": _obj(question=texts, top_k=st.integers(-5, 200)),
    "/retrieve": st.one_of(st.lists(KG_ITEM, max_size=5), _obj(query=texts, top_k=st.integers(-5, 200))),
    "/kg/query": _obj(query=texts, question=texts, dataset=texts, top_k=st.integers(-5, 2000)),
    "/evidence": _obj(question=texts, structured_representation=texts, sources=st.lists(texts, max_size=3),
                      dataset=texts, sample_id=texts, max_evidences=st.integers(-5, 2000)),
    "/ingest": _obj(path=texts),
    "/auth/stream-token": _obj(path=texts),
    "/reason/corag": _obj(question=texts, decode_strategy=texts, top_k=st.integers(-5, 60)),
    "/reason/structgpt": _obj(question=texts, topic_entities=st.lists(texts, max_size=3), dataset=texts),
    "/entities/merge": _obj(target=texts, sources=st.one_of(texts, st.lists(texts, max_size=3))),
}


@pytest.fixture(scope="module")
def client(falkor_server: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    root = tmp_path_factory.mktemp("fuzz_root")
    (root / "a.md").write_text("# A\n\nThe approval flow starts with the team lead.\n")
    settings = Settings(backend="embedded", falkor_data_dir=falkor_server.data_dir,
                        falkor_port=falkor_server.port, graph_name="fuzz_test", llm_base_url=None,
                        ingest_roots=[root], uploads_dir=tmp_path_factory.mktemp("fuzz_uploads"))
    with app_client(settings) as c:
        assert c.post("/ingest", json={"path": str(root)}).status_code == 200
        yield c


def _check(resp: Any, what: str) -> None:
    if resp.status_code == 503:
        assert resp.json()["error"] == "llm_unavailable", (what, resp.text[:300])  # no LLM, by design
        return
    assert resp.status_code < 500, (what, resp.status_code, resp.text[:300])
    if resp.status_code >= 400:
        body = resp.json()
        assert isinstance(body.get("error"), str) and isinstance(body.get("message"), str), (what, body)


@pytest.mark.parametrize("path", sorted(BODIES))
def test_json_bodies_never_give_a_server_error(client: TestClient, path: str) -> None:
    @FUZZ
    @given(body=BODIES[path])
    def run(body: Any) -> None:
        raw = json.dumps(body, ensure_ascii=True).encode()  # lone surrogates travel as \ud800 escapes
        resp = client.post(path, content=raw, headers={"Content-Type": "application/json"})
        _check(resp, f"POST {path} {raw[:300]!r}")
        if path == "/retrieve" and isinstance(body, list) and resp.status_code == 200:
            assert len(resp.json()) == len(body)  # one answer per item, whatever the items hold

    run()


params_text = st.text(alphabet=st.characters(codec="utf-8"), max_size=30) | st.sampled_from(
    [n for n in NASTY if n.encode("utf-8", "ignore").decode() == n])
QUERIES: dict[str, st.SearchStrategy[dict[str, Any]]] = {
    "/ui/api/chunks": st.fixed_dictionaries({"ids": st.lists(params_text, max_size=60)}),
    "/ui/api/kg/samples": st.fixed_dictionaries({"dataset": params_text}, optional={
        "prefix": params_text, "limit": st.integers(-5, 500).map(str) | params_text}),
    "/ui/api/kg/sample": st.fixed_dictionaries(
        {}, optional={"dataset": params_text, "sample_id": params_text}),
    "/graph": st.fixed_dictionaries({}, optional={
        name: params_text for name in ("entity", "document", "dataset", "sample", "focus", "node", "answer",
                                       "depth", "limit")}),
    "/graph/node": st.fixed_dictionaries({}, optional={"id": params_text | params_text.map("e:".__add__),
                                                       "chunks": params_text}),
    "/entities/search": st.fixed_dictionaries({}, optional={"q": params_text, "limit": params_text}),
    "/entities/duplicates": st.fixed_dictionaries({}, optional={
        "min_score": params_text | st.sampled_from(["nan", "inf", "-0", "1e309"]), "limit": params_text}),
    "/documents": st.fixed_dictionaries({}, optional={"offset": params_text | st.integers(-1, 2**70).map(str),
                                                      "limit": params_text}),
}


def _multipart(parts: list[tuple[str, str, bytes]], boundary: str) -> bytes:
    out = b""
    for name, filename, data in parts:
        out += (f"--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"; filename=\"{filename}\""
                "\r\n\r\n").encode("utf-8", "surrogatepass") + data + b"\r\n"
    return out + f"--{boundary}--\r\n".encode()


multipart_bodies = st.one_of(
    st.binary(max_size=300),
    st.builds(_multipart, st.lists(st.tuples(
        st.sampled_from(["file", "other", ""]),
        st.sampled_from(NASTY[:12] + ["a.md", "../../x.txt", "a.pdf", "b"]),
        st.binary(max_size=60)), max_size=3), st.just("B0UNDARY")),
    st.builds(lambda body, cut: body[:cut], st.just(_multipart([("file", "a.md", b"# x\n")], "B0UNDARY")),
              st.integers(0, 80)))


def test_multipart_uploads_never_give_a_server_error(client: TestClient) -> None:
    @FUZZ
    @given(body=multipart_bodies, ctype=st.sampled_from([
        "multipart/form-data; boundary=B0UNDARY", "multipart/form-data", "multipart/form-data; boundary=",
        "multipart/mixed; boundary=B0UNDARY", "text/plain"]))
    def run(body: bytes, ctype: str) -> None:
        resp = client.post("/documents", params={"ingest": "false"}, content=body,
                           headers={"Content-Type": ctype})
        _check(resp, f"POST /documents {ctype} {body[:200]!r}")

    run()


@pytest.mark.parametrize("path", sorted(QUERIES))
def test_query_parameters_never_give_a_server_error(client: TestClient, path: str) -> None:
    @FUZZ
    @given(params=QUERIES[path])
    def run(params: dict[str, Any]) -> None:
        _check(client.get(path, params=params), f"GET {path} {params!r}"[:400])

    run()


# --- issue 25: the same bodies in other encodings, and numbers past Python's conversion limit, on a real
# uvicorn: always a 4xx JSON answer and the keep-alive connection still usable after it -------------------
def _cesu8(text: str) -> bytes:
    """CESU-8: a character outside the BMP as its two UTF-16 surrogates, each encoded as 3 bytes."""
    out = b""
    for char in text:
        if ord(char) < 0x10000:
            out += char.encode("utf-8", "surrogatepass")
        else:
            high, low = divmod(ord(char) - 0x10000, 0x400)
            out += (chr(0xD800 + high) + chr(0xDC00 + low)).encode("utf-8", "surrogatepass")
    return out


def _overlong(text: str) -> bytes:
    """Overlong UTF-8: each ASCII punctuation byte as a 2-byte sequence (C0/C1 lead bytes)."""
    out = bytearray()
    for byte in text.encode("utf-8", "surrogatepass"):
        out += bytes([0xC0 | byte >> 6, 0x80 | byte & 0x3F]) if byte in b'{}[]:,"' else bytes([byte])
    return bytes(out)


SP = "surrogatepass"
OTHER_ENCODINGS: dict[str, Callable[[str], bytes]] = {
    "utf-8 BOM": lambda t: "\ufeff".encode() + t.encode("utf-8", SP),
    "utf-16-le": lambda t: t.encode("utf-16-le", SP), "utf-16-be": lambda t: t.encode("utf-16-be", SP),
    "utf-16 BOM": lambda t: t.encode("utf-16", SP), "utf-32-le": lambda t: t.encode("utf-32-le", SP),
    "utf-32-be": lambda t: t.encode("utf-32-be", SP), "utf-32 BOM": lambda t: t.encode("utf-32", SP),
    "cesu-8": _cesu8, "overlong utf-8": _overlong,
}
HUGE = "__huge_integer__"  # replaced, as a JSON string, by 5,000 digits once the body is written


@pytest.fixture(scope="module")
def connection(falkor_server: Any,
               tmp_path_factory: pytest.TempPathFactory) -> Iterator[http.client.HTTPConnection]:
    settings = Settings(backend="embedded", falkor_data_dir=falkor_server.data_dir,
                        falkor_port=falkor_server.port, graph_name="fuzz_encodings", llm_base_url=None,
                        ingest_roots=[tmp_path_factory.mktemp("fuzz_enc_root")])
    with live_server(settings) as server:
        parts = urlsplit(server.url)
        conn = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=60)
        yield conn
        conn.close()


def _post(conn: http.client.HTTPConnection, path: str, raw: bytes) -> tuple[int, Any]:
    conn.request("POST", path, body=raw, headers={"Content-Type": "application/json",
                                                  "Accept": "application/json, text/event-stream"})
    resp = conn.getresponse()
    body = resp.read()
    assert resp.getheader("content-type", "").startswith("application/json"), (path, resp.status, body[:200])
    return resp.status, json.loads(body)


def _alive(conn: http.client.HTTPConnection, sock: Any) -> None:
    conn.request("GET", "/health")
    resp = conn.getresponse()
    assert resp.status == 200 and json.loads(resp.read())["status"] == "ok"
    assert conn.sock is sock, "the server closed the keep-alive connection after the error"


with_huge = st.one_of(values, st.just(HUGE), st.lists(st.one_of(values, st.just(HUGE)), max_size=3))


@pytest.mark.parametrize("path", sorted(BODIES))
def test_other_encodings_and_huge_integers_are_4xx_and_keep_the_connection(
        connection: http.client.HTTPConnection, path: str) -> None:
    """Any fuzzed body of the endpoint, sent in an encoding other than UTF-8 (422), or holding an integer of
    5,000 digits somewhere (400): refused before parsing, as JSON, on the same keep-alive connection."""
    if connection.sock is None:
        connection.connect()
    sock = connection.sock

    @FUZZ
    @given(body=BODIES[path], encoding=st.sampled_from(sorted(OTHER_ENCODINGS)), extra=with_huge)
    def run(body: Any, encoding: str, extra: Any) -> None:
        text = json.dumps(body, ensure_ascii=False)
        raw = OTHER_ENCODINGS[encoding](text)
        if raw != text.encode("utf-8", SP):  # CESU-8 of BMP-only text is UTF-8; any other variant differs
            status, answer = _post(connection, path, raw)
            assert status == 422 and answer["field"] == "body" and "UTF-8" in answer["message"], \
                (encoding, raw[:200], status, answer)
            _alive(connection, sock)
        huge = json.dumps([body, extra], ensure_ascii=True)
        if f'"{HUGE}"' in huge:
            status, answer = _post(connection, path, huge.replace(f'"{HUGE}"', "-" + "9" * 5000).encode())
            if status == 422:  # the body has a worse problem (checked first): the same answer with a 0 there
                assert (status, answer) == _post(connection, path, huge.replace(f'"{HUGE}"', "0").encode())
            else:
                assert status == 400 and "5000 digits" in answer["message"], (huge[:200], status, answer)
            _alive(connection, sock)

    run()
