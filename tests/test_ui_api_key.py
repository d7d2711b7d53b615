"""The page with NEORAG_API_KEYS set, in headless Chromium: it asks for the key once (on the first 401),
sends it on every fetch, asks for a write key when an ingest needs one, opens the ingest stream with a
short-lived token (never the key in a URL), and forgets the key on request."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from selenium.webdriver.common.by import By

from app.store.embedded import ServerInfo
from tests.browser.driver import WebDriver, console_errors, screenshot
from tests.browser.fixtures import drop_graph, page_settings
from tests.browser.fixtures import wait_for as _wait
from tests.browser.server import LiveServer, live_server
from tests.conftest import FIXTURES

pytestmark = pytest.mark.browser
READ_KEY = "browser-read-key-0000001"
WRITE_KEY = "browser-write-key-000001"


@pytest.fixture(scope="module")
def served(falkor_server: ServerInfo,
           tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LiveServer, Path]]:
    root = tmp_path_factory.mktemp("key_root")
    shutil.copytree(FIXTURES / "ui" / "corpus", root / "corpus")
    settings = page_settings(falkor_server, "uikey", ingest_roots=[root],
                             api_keys=f"read:{READ_KEY},write:{WRITE_KEY}", uploads_dir=root / "uploads")
    with live_server(settings) as server:
        yield server, root / "corpus"
    drop_graph(falkor_server, settings)


def _enter_key(browser: WebDriver, key: str, reason: str) -> None:
    dialog = _wait(browser, lambda d: d.find_element(By.ID, "key-dialog").is_displayed()
                   and d.find_element(By.ID, "key-dialog"))
    assert reason in browser.find_element(By.ID, "key-reason").text
    assert dialog
    browser.find_element(By.ID, "key-input").send_keys(key)
    browser.find_element(By.ID, "key-save").click()
    _wait(browser, lambda d: not d.find_element(By.ID, "key-dialog").is_displayed())


def test_the_page_asks_once_then_ingests_with_a_write_key(browser: WebDriver,
                                                          served: tuple[LiveServer, Path]) -> None:
    server, corpus = served
    browser.get(server.url + "/ui#status")
    _enter_key(browser, READ_KEY, "needs an API key")
    _wait(browser, lambda d: "graph" in d.find_element(By.ID, "status-cards").text)
    assert browser.execute_script("return sessionStorage.getItem('neorag.apiKey')") == READ_KEY
    assert browser.execute_script("return localStorage.getItem('neorag.apiKey')") is None
    browser.find_element(By.ID, "tab-ranking").click()  # a second view: no second prompt
    browser.find_element(By.ID, "tab-status").click()
    _wait(browser, lambda d: "graph" in d.find_element(By.ID, "status-cards").text)
    assert not browser.find_element(By.ID, "key-dialog").is_displayed()

    browser.find_element(By.ID, "tab-ingest").click()
    field = browser.find_element(By.ID, "ingest-path")
    field.clear()
    field.send_keys(str(corpus))
    browser.find_element(By.ID, "ingest-start").click()
    _enter_key(browser, WRITE_KEY, "needs a write key")
    _wait(browser, lambda d: d.find_element(By.ID, "ingest-state").get_attribute("textContent") == "done",
          120)
    counts = {r.get_attribute("data-key"): r.find_element(By.TAG_NAME, "td").text
              for r in browser.find_elements(By.CSS_SELECTOR, "#ingest-counts tbody tr")}
    assert counts["files_processed"] == "3"
    urls = browser.execute_script("return performance.getEntriesByType('resource').map((e) => e.name)")
    streams = [u for u in urls if "/ingest/stream" in u]
    assert streams and all("sse_token=" in u for u in streams), streams
    assert not any(READ_KEY in u or WRITE_KEY in u for u in urls)  # keys travel in headers only
    screenshot(browser, "api_key_ingest")
    assert console_errors(browser) == [] or all("401" in e or "403" in e for e in console_errors(browser))

    browser.find_element(By.ID, "key-change").click()
    _wait(browser, lambda d: d.find_element(By.ID, "key-dialog").is_displayed())
    browser.find_element(By.ID, "key-forget").click()
    assert browser.execute_script("return sessionStorage.getItem('neorag.apiKey')") is None


def test_documents_upload_asks_for_a_write_key_and_ingests_with_a_stream_token(
        browser: WebDriver, served: tuple[LiveServer, Path], tmp_path: Path) -> None:
    server, _ = served
    note = tmp_path / "keyed-note.md"
    note.write_text("# Keyed note\n\nThe gatehouse opens at nine and closes at five.\n", encoding="utf-8")
    browser.get(server.url + "/ui#documents")
    browser.execute_script("sessionStorage.clear(); localStorage.clear();")
    browser.refresh()
    _enter_key(browser, READ_KEY, "needs an API key")  # the document list is a read
    _wait(browser, lambda d: d.find_element(By.ID, "docs-limits").text not in ("", "…"))
    browser.find_element(By.ID, "docs-file").send_keys(str(note))
    _enter_key(browser, WRITE_KEY, "needs a write key")  # the upload is a write: asked once, then retried
    row = _wait(browser, lambda d: d.find_element(By.CSS_SELECTOR, "#docs-uploads tbody tr"))
    _wait(browser, lambda d: row.get_attribute("data-state") in ("done", "error"), 120)  # type: ignore[attr-defined]
    assert row.get_attribute("data-state") == "done", row.text  # type: ignore[attr-defined]
    urls = browser.execute_script("return performance.getEntriesByType('resource').map((e) => e.name)")
    streams = [u for u in urls if "/ingest/stream" in u]
    assert streams and all("sse_token=" in u for u in streams), streams
    assert not any(READ_KEY in u or WRITE_KEY in u for u in urls)  # keys travel in headers only
