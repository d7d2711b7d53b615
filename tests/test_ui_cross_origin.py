"""No state change is reachable from another site: a page served by a second local HTTP server (another
origin: ``attacker.test`` mapped to 127.0.0.1 in Chromium, and another port of 127.0.0.1) tries fetch
(no-cors, simple and preflighted), a form POST, an <img> GET and an EventSource against a NeoRAG that has
NO API keys. The test then proves nothing changed (no ingest started, the cache not cleared), that every
attempt reached NeoRAG and was refused (its refusal counters), and that the page could read nothing.
A DNS-rebinding name for NeoRAG itself gets the Host refusal."""

from __future__ import annotations

import json
import shutil
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
from selenium.webdriver.support.ui import WebDriverWait

from app.store.embedded import ServerInfo
from tests.browser.driver import WebDriver, chromium, missing_browser
from tests.browser.fixtures import drop_graph, page_settings
from tests.browser.server import LiveServer, free_port, live_server
from tests.conftest import FIXTURES

pytestmark = pytest.mark.browser

ATTACK = """<!doctype html><html><body><h1>Totally harmless page</h1>
<iframe name="sink" id="sink"></iframe>
<form id="form" method="POST" action="__T__/cache/clear" target="sink"><input name="x" value="1"></form>
<form id="form2" method="POST" action="__T__/ingest" enctype="text/plain" target="sink">
  <input name='{"path": "__ROOT__", "x": "' value='"}'></form>
<script>
const T = "__T__", ROOT = "__ROOT__";
window.results = {};
const note = (k, v) => { window.results[k] = v; };
const settle = (p, ms) => Promise.race([p, new Promise((r) => setTimeout(() => r("timeout"), ms))]);
async function attack() {
  await settle(fetch(T + "/cache/clear", {method: "POST", mode: "no-cors"})
    .then((r) => note("nocors_clear", "opaque:" + r.type + ":" + r.status),
          (e) => note("nocors_clear", "error")), 5000);
  await settle(fetch(T + "/cache/clear", {method: "POST", body: "x", headers: {"Content-Type": "text/plain"}})
    .then((r) => note("simple_clear", "read:" + r.status), (e) => note("simple_clear", "blocked")), 5000);
  await settle(fetch(T + "/ingest", {method: "POST", headers: {"Content-Type": "application/json"},
    body: JSON.stringify({path: ROOT})})
    .then((r) => note("preflighted_ingest", "read:" + r.status),
          (e) => note("preflighted_ingest", "blocked")), 5000);
  await settle(fetch(T + "/cache/stats").then((r) => r.text())
    .then((t) => note("read_stats", "read:" + t.slice(0, 40)), (e) => note("read_stats", "blocked")), 5000);
  await settle(new Promise((resolve) => {
    const img = new Image();
    img.onload = () => { note("img_stream", "loaded"); resolve(); };
    img.onerror = () => { note("img_stream", "error"); resolve(); };
    img.src = T + "/ingest/stream?path=" + encodeURIComponent(ROOT) + "&img=1";
  }), 5000);
  await settle(new Promise((resolve) => {
    const es = new EventSource(T + "/ingest/stream?path=" + encodeURIComponent(ROOT) + "&es=1");
    es.onmessage = () => { note("eventsource", "message"); es.close(); resolve(); };
    es.onerror = () => { note("eventsource", "error:" + es.readyState); es.close(); resolve(); };
  }), 5000);
  for (const id of ["form", "form2"]) {
    await settle(new Promise((resolve) => {
      document.getElementById("sink").onload = () => { note(id, "submitted"); resolve(); };
      document.getElementById(id).submit();
    }), 5000);
  }
  window.done = true;
}
attack();
</script></body></html>"""


class _Attacker(BaseHTTPRequestHandler):
    page = b""

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(self.page)))
        self.end_headers()
        self.wfile.write(self.page)

    def log_message(self, *args: Any) -> None:
        return


@pytest.fixture(scope="module")
def target(falkor_server: ServerInfo,
           tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LiveServer, Path]]:
    root = tmp_path_factory.mktemp("xsite_root")
    shutil.copytree(FIXTURES / "ui" / "corpus", root / "corpus")
    settings = page_settings(falkor_server, "xsite", ingest_roots=[root])
    with live_server(settings) as server:
        yield server, root / "corpus"
    drop_graph(falkor_server, settings)


@pytest.fixture(scope="module")
def attacker(target: tuple[LiveServer, Path]) -> Iterator[int]:
    server, root = target
    _Attacker.page = ATTACK.replace("__T__", server.url).replace("__ROOT__", str(root)).encode()
    httpd = ThreadingHTTPServer(("127.0.0.1", free_port()), _Attacker)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield int(httpd.server_address[1])
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(scope="module")
def browser() -> Iterator[WebDriver]:
    why = missing_browser()
    if why:
        pytest.fail(why)
    with chromium(["--host-resolver-rules=MAP attacker.test 127.0.0.1, MAP rebind.test 127.0.0.1"]) as driver:
        yield driver


def _state(url: str) -> dict[str, Any]:
    diag = httpx.get(url + "/diagnostics", timeout=30).json()
    stats = httpx.get(url + "/cache/stats", timeout=30).json()
    return {"chunks": diag["counts"]["nodes"].get("Chunk", 0), "cache": stats["embedding_cache_size"],
            "refused": diag["security"]["refused"].get("cross_site", 0)}


@pytest.mark.parametrize("origin", ["http://attacker.test:{port}", "http://127.0.0.1:{port}"])
def test_another_origin_cannot_change_state(browser: WebDriver, target: tuple[LiveServer, Path],
                                            attacker: int, origin: str) -> None:
    server, _ = target
    warm = httpx.post(server.url + "/query", json={"question": "Who approves a request?"}, timeout=60)
    assert warm.status_code == 200  # fills the query-embedding cache
    before = _state(server.url)
    assert before["cache"] >= 1 and before["chunks"] == 0
    browser.get(origin.format(port=attacker) + "/attack.html")
    WebDriverWait(browser, 60, poll_frequency=0.2).until(
        lambda d: d.execute_script("return window.done === true"))
    seen = browser.execute_script("return window.results")
    after = _state(server.url)
    assert after["chunks"] == 0, "an ingest ran"
    assert after["cache"] == before["cache"], "the cache was cleared"
    # every state-changing attempt reached NeoRAG and was refused:
    # 2 fetches, the preflight, img, EventSource, 2 forms
    assert after["refused"] - before["refused"] >= 7, (before, after, seen)
    # and the page learned nothing: fetch answers unreadable (no CORS), img and EventSource failed
    assert seen["simple_clear"] == "blocked" and seen["preflighted_ingest"] == "blocked", seen
    assert seen["read_stats"] == "blocked" and seen["nocors_clear"].startswith("opaque"), seen
    assert seen["img_stream"] == "error" and seen["eventsource"].startswith("error"), seen
    assert seen["form"] == "submitted" and seen["form2"] == "submitted", seen  # sent, refused (counted above)


def test_the_page_itself_may_change_state(browser: WebDriver, target: tuple[LiveServer, Path]) -> None:
    """The same-origin /ui is not caught by the check: its own POST clears the cache."""
    server, _ = target
    browser.get(server.url + "/ui#status")
    result = browser.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "fetch('/cache/clear', {method: 'POST'}).then((r) => r.json()).then((b) => done(JSON.stringify(b)),"
        " (e) => done('error ' + e));")
    assert json.loads(result) == {"cleared": True}
    assert _state(server.url)["cache"] == 0


def test_a_dns_rebinding_name_gets_nothing(browser: WebDriver, target: tuple[LiveServer, Path]) -> None:
    server, _ = target
    port = server.url.rsplit(":", 1)[1]
    browser.get(f"http://rebind.test:{port}/cache/stats")
    text = browser.execute_script("return document.body.innerText")
    assert "host_not_allowed" in text and "embedding_cache" not in text, text[:300]
