"""What the Chromium page tests share (the ``browser`` fixture itself is in tests/conftest.py): a fresh
page load on a view, a waiter, and a graph of their own on the session FalkorDB (page tests run on the
embedded store only; see tests/conftest.py)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Sequence
from typing import Any

import pytest
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from app.core.config import Settings
from app.store.cypher_library import CypherLibrary
from app.store.embedded import ServerInfo
from app.store.falkor import FalkorStore
from tests.browser.driver import WebDriver, chromium, missing_browser


def started_browser(extra_flags: Sequence[str] = ()) -> Iterator[WebDriver]:
    """A headless Chromium for a module fixture; fails (never skips) when Chromium is missing."""
    why = missing_browser()
    if why:
        pytest.fail(why)
    with chromium(extra_flags) as driver:
        yield driver


def wait_for(browser: WebDriver, what: Any, timeout: float = 60) -> Any:
    """Wait for ``what`` to return something truthy; an element gone stale while read is read again."""
    return WebDriverWait(browser, timeout, poll_frequency=0.1,
                         ignored_exceptions=(StaleElementReferenceException,)).until(what)


def open_view(browser: WebDriver, base_url: str, view: str, timeout: float = 10) -> None:
    """A fresh page load on ``view`` (a hash-only change would not reload the page)."""
    browser.get("about:blank")
    browser.get(f"{base_url}/ui#{view}")
    wait_for(browser, lambda d: d.find_element(By.ID, f"view-{view.split('?')[0]}").is_displayed(), timeout)


def page_settings(falkor_server: ServerInfo, prefix: str, **values: Any) -> Settings:
    """Settings on the session FalkorDB, a new graph named ``prefix_<random>``, no LLM unless given."""
    base: dict[str, Any] = {"backend": "embedded", "falkor_data_dir": falkor_server.data_dir,
                            "falkor_port": falkor_server.port, "llm_base_url": None,
                            "graph_name": f"{prefix}_{uuid.uuid4().hex[:10]}"}
    return Settings(**{**base, **values})


def drop_graph(falkor_server: ServerInfo, settings: Settings) -> None:
    """Delete the module's graph from the session FalkorDB."""
    store = FalkorStore(CypherLibrary(settings.cypher_dir, "falkordb"), "127.0.0.1", falkor_server.port,
                        settings.graph_name)
    try:
        store.drop_graph()
    finally:
        store.close()
