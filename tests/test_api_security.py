"""API keys, route scopes, stream tokens, Host allow-list, cross-site refusal (real app and store)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.api.main import create_app
from app.api.security import READ, WRITE, access
from app.api.security.access import flat_routes, route_level
from app.api.security.keys import KeyRing
from app.core.config import Settings
from app.core.errors import ConfigError
from app.services.container import build_services
from tests.support.apps import app_client

READ_KEY = "read-key-for-tests-0001"
WRITE_KEY = "write-key-for-tests-0001"
KEYS = f"read:{READ_KEY}, write:{WRITE_KEY}"
READ_H = {"X-API-Key": READ_KEY}
WRITE_H = {"Authorization": f"Bearer {WRITE_KEY}"}
KG_ITEM = {"action_type": "get_relations", "dataset_name": "webqsp", "sample_id": "s", "entity_id": "e"}


@pytest.fixture
def keyed(settings: Settings, tmp_path: Path) -> Iterator[TestClient]:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("# A\n\nAlpha is a letter.\n")
    with app_client(settings.model_copy(update={"api_keys": KEYS, "ingest_roots": [tmp_path]})) as client:
        yield client


def _error(resp: Any, status: int, code: str) -> dict[str, Any]:
    assert resp.status_code == status, resp.text
    assert resp.headers["content-type"].startswith("application/json")
    body: dict[str, Any] = resp.json()
    assert body["error"] == code and body["message"], body
    return body


def test_keys_parse_and_malformed_keys_fail_at_start() -> None:
    ring = KeyRing.parse(KEYS)
    assert ring.enabled and ring.level_of(READ_KEY.encode()) == READ
    assert ring.level_of(WRITE_KEY.encode()) == WRITE
    assert ring.level_of(b"read-key-for-tests-0002") is None and ring.level_of(b"") is None
    assert not KeyRing.parse("").enabled and not KeyRing.parse(" , ").enabled
    for bad in ("admin:" + "x" * 20, "read:short", "x" * 20, "write:" + "a b" * 8):
        with pytest.raises(ConfigError):
            KeyRing.parse(bad)
    with pytest.raises(ConfigError, match="NEORAG_API_KEYS"):
        create_app(Settings(_env_file=None, api_keys="read:short"))  # type: ignore[call-arg]


def test_without_keys_everything_is_open(settings: Settings) -> None:
    with app_client(settings) as client:
        assert client.get("/diagnostics").status_code == 200
        assert client.post("/cache/clear").json() == {"cleared": True}
        assert client.post("/auth/stream-token", json={}).json()["token"] is None


def test_health_is_open_and_everything_else_needs_a_key(keyed: TestClient) -> None:
    assert keyed.get("/health").status_code == 200
    for method, path, body in [("GET", "/diagnostics", None), ("GET", "/actions", None),
                               ("POST", "/retrieve", [KG_ITEM]), ("POST", "/retrieve", {"query": "alpha"}),
                               ("POST", "/query", {"question": "alpha?"}), ("POST", "/cache/clear", None),
                               ("GET", "/ui/api/ingest/roots", None), ("GET", "/no-such-route", None)]:
        resp = keyed.request(method, path, json=body)
        _error(resp, 401, "unauthorized")
        assert resp.headers["www-authenticate"].startswith("Bearer")
    bad = keyed.get("/diagnostics", headers={"X-API-Key": "not-a-key-at-all-000"})
    _error(bad, 401, "invalid_api_key")
    assert 'error="invalid_token"' in bad.headers["www-authenticate"]
    assert keyed.get("/no-such-route", headers=READ_H).status_code == 404  # a key, then the plain 404


def test_read_key_reads_write_key_writes(keyed: TestClient, tmp_path: Path) -> None:
    for headers in (READ_H, WRITE_H, {"Authorization": f"bearer {READ_KEY}"}):
        assert keyed.get("/diagnostics", headers=headers).status_code == 200
        assert keyed.post("/retrieve", json=[KG_ITEM], headers=headers).status_code == 200  # KG-R1: a read
        assert keyed.post("/retrieve", json={"query": "alpha"}, headers=headers).status_code == 200  # CoRAG
    for method, path, kwargs in [("POST", "/cache/clear", {}),
                                 ("POST", "/ingest", {"json": {"path": str(tmp_path / "docs")}}),
                                 ("GET", "/ingest/stream", {"params": {"path": str(tmp_path / "docs")}})]:
        body = _error(keyed.request(method, path, headers=READ_H, **kwargs), 403, "insufficient_scope")
        assert "write key" in body["message"]
    assert keyed.get("/cache/stats", headers=READ_H).json()["answer_cache_size"] == 0
    assert keyed.post("/cache/clear", headers=WRITE_H).json() == {"cleared": True}
    done = keyed.post("/ingest", json={"path": str(tmp_path / "docs")}, headers={"X-API-Key": WRITE_KEY})
    assert done.status_code == 200 and done.json()["files_processed"] == 1


def test_cache_stats_show_other_clients_questions_only_to_a_write_key(settings: Settings) -> None:
    """A read key sees counts and sha256 digests of the cache keys; the texts (recent questions) need a write
    key (issue 25, item 7); with public reads, a caller without a key is a reader."""
    from app.retrieval.cache import key_hash

    question = "what did the private memo about Alpha say?"
    with app_client(settings.model_copy(update={"api_keys": KEYS, "public_read": True})) as client:
        assert client.post("/query", json={"question": question}, headers=WRITE_H).status_code == 200
        for headers in (READ_H, {}):
            stats = client.get("/cache/stats", headers=headers).json()
            assert "private memo" not in str(stats) and stats["keys_shown_as"] == "sha256", stats
            assert stats["embedding_cache_size"] >= 1
            assert all(k.startswith("sha256:") and len(k) == 23 for k in stats["embedding_cache_keys"])
            _error(client.get("/cache/stats", params={"texts": "true"}, headers=headers), 403,
                   "insufficient_scope")
        texts = client.get("/cache/stats", params={"texts": "true"}, headers=WRITE_H).json()
        assert texts["keys_shown_as"] == "text"
        key = next(k for k in texts["embedding_cache_keys"] if "private memo" in k)
        assert key_hash(key) in client.get("/cache/stats", headers=READ_H).json()["embedding_cache_keys"]


def test_public_read_opens_reads_only(settings: Settings) -> None:
    with app_client(settings.model_copy(update={"api_keys": KEYS, "public_read": True})) as client:
        assert client.get("/diagnostics").status_code == 200
        assert client.post("/retrieve", json=[KG_ITEM]).status_code == 200
        assert client.post("/retrieve", json={"query": "anything"}).status_code == 200
        _error(client.post("/cache/clear"), 401, "unauthorized")
        wrong = client.get("/diagnostics", headers={"X-API-Key": "wrong-key-wrong-key"})
        _error(wrong, 401, "invalid_api_key")
        _error(client.post("/auth/stream-token", json={}), 401, "invalid_request")  # nothing to grant


def test_an_undeclared_route_needs_a_write_key_and_is_cross_site_checked(settings: Settings) -> None:
    app = create_app(settings.model_copy(update={"api_keys": KEYS}),
                     services_factory=lambda s: build_services(s, start_embedded=False))
    state: dict[str, int] = {"calls": 0}

    def undeclared() -> dict[str, int]:  # e.g. another engineer's new GET that changes state
        state["calls"] += 1
        return state

    @access(READ)
    def declared_read() -> dict[str, bool]:
        return {"ok": True}

    app.add_api_route("/x/undeclared", undeclared, methods=["GET"])
    app.add_api_route("/x/read", declared_read, methods=["GET"])
    with TestClient(app, base_url="http://127.0.0.1") as client:
        _error(client.get("/x/undeclared", headers=READ_H), 403, "insufficient_scope")
        _error(client.get("/x/undeclared", headers={**WRITE_H, "Sec-Fetch-Site": "cross-site"}), 403,
               "cross_site_request")
        assert client.get("/x/undeclared", headers=WRITE_H).json() == {"calls": 1}
        assert client.get("/x/read", headers=READ_H).json() == {"ok": True}
        assert client.get("/x/read", headers={**READ_H, "Sec-Fetch-Site": "cross-site"}).status_code == 200
    assert state["calls"] == 1
    doc = app.openapi()
    assert doc["paths"]["/x/undeclared"]["get"]["x-neorag-access"] == WRITE


EXPECTED_LEVELS = {
    ("GET", "/health"): "public", ("GET", "/openapi.json"): "public", ("GET", "/docs"): "public",
    ("GET", "/ui"): "public", ("GET", "/ui/{name:path}"): "public",
    ("GET", "/diagnostics"): "read", ("POST", "/retrieve"): "read", ("GET", "/actions"): "read",
    ("POST", "/kg/query"): "read", ("POST", "/query"): "read", ("POST", "/ranking/preview"): "read",
    ("GET", "/cache/stats"): "read", ("POST", "/reason/structgpt"): "read", ("POST", "/reason/corag"): "read",
    ("POST", "/evidence"): "read", ("GET", "/ui/api/chunks"): "read", ("POST", "/auth/stream-token"): "read",
    ("POST", "/ingest"): "write", ("GET", "/ingest/stream"): "write", ("POST", "/cache/clear"): "write",
    ("GET", "/graph"): "read", ("GET", "/graph/node"): "read", ("GET", "/entities/search"): "read",
    ("GET", "/entities/duplicates"): "read", ("POST", "/entities/merge"): "write",
    ("GET", "/documents"): "read", ("GET", "/documents/{doc_id}"): "read", ("POST", "/documents"): "write",
    ("DELETE", "/documents/{doc_id}"): "write", ("*", "/mcp"): "write",
}


def test_every_route_has_a_level_and_state_changing_ones_need_write(settings: Settings) -> None:
    """The table of every route the app serves: declared or (undeclared) write, never accidentally open."""
    app = create_app(settings)
    levels = {}
    for route in flat_routes(app.routes):
        for method in sorted(getattr(route, "methods", None) or {"*"}):
            levels[(method, getattr(route, "path", "?"))] = route_level(route)
    for key, level in EXPECTED_LEVELS.items():
        assert levels[key] == level, key
    public = {k for k, v in levels.items() if v == "public"}
    assert {p for _, p in public} <= {"/health", "/openapi.json", "/docs", "/docs/oauth2-redirect", "/redoc",
                                      "/ui", "/ui/", "/ui/{name:path}"}, public


def test_graph_entities_documents_and_mcp_scopes(keyed: TestClient) -> None:
    """Reads take a read key; merges, uploads, deletes and the MCP endpoint (its tools ingest) a write key."""
    reads: list[tuple[str, dict[str, str]]] = [
        ("/graph", {"entity": "Alpha"}), ("/graph/node", {"id": "e:alpha"}),
        ("/entities/search", {"q": "alp"}), ("/entities/duplicates", {}), ("/documents", {})]
    for path, params in reads:
        _error(keyed.get(path, params=params), 401, "unauthorized")
        assert keyed.get(path, params=params, headers=READ_H).status_code in (200, 404), path
    writes = [("POST", "/entities/merge", {"json": {"target": "Alpha", "sources": ["Beta"]}}),
              ("DELETE", "/documents/doc-0123456789abcdef", {}),
              ("POST", "/documents", {"files": {"file": ("a.md", b"# A\n\nAlpha.\n", "text/markdown")}}),
              ("POST", "/mcp", {"json": {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}})]
    for method, path, kwargs in writes:
        _error(keyed.request(method, path, **kwargs), 401, "unauthorized")
        _error(keyed.request(method, path, headers=READ_H, **kwargs), 403, "insufficient_scope")
        cross = keyed.request(method, path, headers={**WRITE_H, "Origin": "https://attacker.test"}, **kwargs)
        _error(cross, 403, "cross_site_request")
    assert keyed.delete("/documents/doc-0123456789abcdef", headers=WRITE_H).status_code == 404
    assert keyed.post("/entities/merge", json={"target": "Nobody here", "sources": ["Nor here"]},
                      headers=WRITE_H).status_code == 404
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
    mcp = keyed.post("/mcp", json=init, headers={**WRITE_H, "Accept": "application/json, text/event-stream",
                                                 "Host": "127.0.0.1:8010"})  # the SDK wants a port
    assert mcp.status_code == 200, mcp.text  # the write key reaches the MCP server itself


def test_stream_token_opens_one_get_path_for_a_while(keyed: TestClient, tmp_path: Path) -> None:
    minted = keyed.post("/auth/stream-token", json={"path": "/ingest/stream"}, headers=WRITE_H).json()
    assert minted["level"] == "write" and minted["param"] == "sse_token" and minted["expires_in"] == 60
    params = {"path": str(tmp_path / "docs"), "sse_token": minted["token"]}
    with keyed.stream("GET", "/ingest/stream", params=params) as resp:
        assert resp.status_code == 200 and "event: start" in resp.read().decode()
    _error(keyed.get("/diagnostics", params={"sse_token": minted["token"]}), 401, "invalid_api_key")  # path
    _error(keyed.post("/cache/clear", params={"sse_token": minted["token"]}), 401, "unauthorized")  # GET only
    read = keyed.post("/auth/stream-token", json={}, headers=READ_H).json()
    with_read = keyed.get("/ingest/stream", params={**params, "sse_token": read["token"]})
    _error(with_read, 403, "insufficient_scope")
    tampered = minted["token"].replace(".write.", ".read.")
    _error(keyed.get("/ingest/stream", params={**params, "sse_token": tampered}), 401, "invalid_api_key")
    ring = KeyRing.parse(KEYS)
    old = ring.mint("write", "/ingest/stream", 60, now=time.time() - 120)
    assert ring.verify(old, "/ingest/stream") is None
    assert ring.verify(old, "/ingest/stream", now=time.time() - 100) == "write"
    changed = KeyRing.parse(f"write:{WRITE_KEY}")  # other keys: other secret
    assert changed.verify(minted["token"], "/ingest/stream") is None
    assert keyed.post("/auth/stream-token", json={"path": "/nope"}, headers=READ_H).status_code == 404


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.1:8010", "localhost:1234", "LOCALHOST", "[::1]:8010",
                                  "[::1]", "localhost."])
def test_loopback_hosts_are_served(settings: Settings, host: str) -> None:
    with app_client(settings) as client:
        assert client.get("/health", headers={"Host": host}).status_code == 200


@pytest.mark.parametrize("host", ["evil.example", "evil.example:8010", "127.0.0.1.evil.example", "10.0.0.5",
                                  "localhost.evil.example:80", "[::2]:8010"])
def test_a_foreign_host_is_refused_before_anything_runs(settings: Settings, host: str) -> None:
    with app_client(settings) as client:
        for method, path in (("GET", "/health"), ("GET", "/ui/api/ingest/roots"), ("POST", "/cache/clear")):
            body = _error(client.request(method, path, headers={"Host": host}), 400, "host_not_allowed")
            assert "NEORAG_ALLOWED_HOSTS" in body["message"]


def test_allowed_hosts_setting(settings: Settings) -> None:
    extra = settings.model_copy(update={"allowed_hosts": ["neorag.lan", "*.corp.example"]})
    with app_client(extra) as client:
        for host in ("neorag.lan:8010", "a.corp.example", "b.c.corp.example:1"):
            assert client.get("/health", headers={"Host": host}).status_code == 200, host
        assert client.get("/health", headers={"Host": "corp.example.evil"}).status_code == 400
    with app_client(settings.model_copy(update={"allowed_hosts": ["*"]})) as client:
        assert client.get("/health", headers={"Host": "anything.example"}).status_code == 200


def test_state_changes_from_another_origin_are_refused(settings: Settings, tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("# A\n\nAlpha.\n")
    with app_client(settings.model_copy(update={"ingest_roots": [tmp_path]})) as client:
        client.post("/query", json={"question": "Alpha?"})
        cached = client.get("/cache/stats").json()["embedding_cache_size"]
        assert cached >= 1
        foreign = [{"Origin": "http://evil.example"}, {"Origin": "http://127.0.0.1:9999"}, {"Origin": "null"},
                   {"Sec-Fetch-Site": "cross-site"}, {"Sec-Fetch-Site": "same-site"}]
        for headers in foreign:
            _error(client.post("/cache/clear", headers=headers), 403, "cross_site_request")
            stream = client.get("/ingest/stream", params={"path": str(tmp_path / "docs")}, headers=headers)
            _error(stream, 403, "cross_site_request")
            _error(client.post("/ingest", json={"path": str(tmp_path / "docs")}, headers=headers), 403,
                   "cross_site_request")
            _error(client.delete("/query", headers=headers), 403, "cross_site_request")
        assert client.get("/cache/stats").json()["embedding_cache_size"] == cached
        assert client.get("/diagnostics").json()["counts"]["nodes"].get("Chunk", 0) == 0  # no ingest ran
        assert client.get("/diagnostics").json()["security"]["refused"]["cross_site"] == 4 * len(foreign)
        # reads from another origin are answered (the browser keeps the answer from that page: no CORS)
        assert client.get("/cache/stats", headers={"Origin": "http://evil.example"}).status_code == 200
        # the page itself (same origin), curl and research clients (no Origin, no Sec-Fetch-Site)
        for headers in ({"Origin": "http://127.0.0.1"}, {"Sec-Fetch-Site": "same-origin"},
                        {"Sec-Fetch-Site": "none"}, {}):
            assert client.post("/cache/clear", headers=headers).json() == {"cleared": True}


def test_cors_origins_are_honoured(settings: Settings) -> None:
    allowed = "http://app.example:3000"
    with app_client(settings.model_copy(update={"cors_origins": [allowed]})) as client:
        pre = client.options("/query", headers={"Origin": allowed, "Access-Control-Request-Method": "POST",
                                                "Access-Control-Request-Headers": "content-type, x-api-key"})
        assert pre.status_code == 200 and pre.headers["access-control-allow-origin"] == allowed
        assert "x-api-key" in pre.headers["access-control-allow-headers"].lower()
        post = client.post("/cache/clear", headers={"Origin": allowed})
        assert post.status_code == 200 and post.headers["access-control-allow-origin"] == allowed
        read = client.get("/cache/stats", headers={"Origin": allowed})
        assert read.headers["access-control-allow-origin"] == allowed
        other = client.options("/query", headers={"Origin": "http://evil.example",
                                                  "Access-Control-Request-Method": "POST"})
        _error(other, 403, "cross_site_request")
        assert "access-control-allow-origin" not in client.get("/cache/stats",
                                                               headers={"Origin": "http://evil.example"}).headers
    with app_client(settings) as client:  # no CORS origins: every foreign preflight is refused, as JSON
        pre = client.options("/cache/clear", headers={"Origin": "http://evil.example",
                                                      "Access-Control-Request-Method": "POST"})
        _error(pre, 403, "cross_site_request")


def test_origin_and_host_helpers() -> None:
    from app.api.security.origins import HostPolicy, OriginPolicy, host_name

    names = [host_name(h) for h in ("[::1]:80", "LocalHost.:8010", "127.0.0.1")]
    assert names == ["::1", "localhost", "127.0.0.1"]
    policy = OriginPolicy.build(["http://app.example:3000/"])
    assert policy.trusts("http://localhost", "localhost:80") and policy.trusts("http://app.example:3000", "x")
    assert not policy.trusts("http://localhost:8011", "localhost:8010")
    assert not policy.trusts("https://localhost.evil:8010", "localhost:8010")
    assert policy.refuses(None, None, "localhost") is None  # curl, KG-R1: no Origin, no Sec-Fetch-Site
    assert HostPolicy.build([]).allows(None)  # HTTP/1.0 without Host: never a browser
