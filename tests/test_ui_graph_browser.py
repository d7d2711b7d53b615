"""The Graph and Entities views in a real headless Chromium against a real uvicorn server: draw an entity's
graph from the search box, click a node for its side panel, double-click to expand it, ask a question and
open "why this answer", review a duplicate proposal and merge it. Screenshots land in tests/artifacts/."""

from __future__ import annotations

import json
from collections.abc import Iterator
from urllib.request import urlopen

import pytest
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By

from app.store.embedded import ServerInfo
from tests.browser.driver import WebDriver, console_errors, screenshot
from tests.browser.fixtures import drop_graph, page_settings
from tests.browser.fixtures import open_view as _open
from tests.browser.fixtures import wait_for as _wait
from tests.browser.server import live_server
from tests.support.graphs import LEAGUE_DOCS, write_docs

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def base_url(falkor_server: ServerInfo, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A server on this module's own graph with the league corpus ingested."""
    root = tmp_path_factory.mktemp("graph_ui")
    settings = page_settings(falkor_server, "gui", ingest_roots=[root])
    write_docs(root / "docs", LEAGUE_DOCS)
    with live_server(settings) as live:
        from ingest.options import IngestOptions
        from ingest.pipeline import ingest_path

        services = live.server.config.app.state.services  # type: ignore[attr-defined]
        ingest_path(services, root / "docs", IngestOptions(llm_relations=False, checkpoint=False))
        yield live.url
    drop_graph(falkor_server, settings)


def _count(browser: WebDriver, selector: str = "") -> int:
    return int(
        browser.execute_script(
            "const cy = window.NeoRAG.graph.cy; return cy ? cy.nodes(arguments[0]).length : 0;", selector
        )
    )


def _node_at(browser: WebDriver, node_id: str) -> tuple[int, int]:
    """Offset of a drawn node from the canvas centre, where Selenium's pointer offsets start (the centre of
    the element's visible part: the whole canvas is scrolled into view first)."""
    browser.execute_script("document.getElementById('graph-canvas').scrollIntoView({block: 'center'})")
    x, y, w, h = browser.execute_script(
        "const cy = window.NeoRAG.graph.cy; const p = cy.getElementById(arguments[0]).renderedPosition();"
        "const c = document.getElementById('graph-canvas');"
        "return [p.x, p.y, c.clientWidth, c.clientHeight];",
        node_id,
    )
    return int(x - w / 2), int(y - h / 2)


def test_entity_graph_side_panel_and_expansion(browser: WebDriver, base_url: str) -> None:
    _open(browser, base_url, "graph")
    box = browser.find_element(By.ID, "graph-entity")
    box.send_keys("Hara")
    _wait(
        browser,
        lambda d: (
            "Harald Hardrada"
            in [
                o.get_attribute("value")
                for o in d.find_elements(By.CSS_SELECTOR, "#graph-entity-list option")
            ]
        ),
    )
    box.clear()
    box.send_keys("Harald Hardrada")
    browser.find_element(By.ID, "graph-go").click()
    _wait(browser, lambda d: _count(d) > 0)
    # the centre's side panel opens by itself: its properties and the text of its chunks
    _wait(browser, lambda d: d.find_element(By.ID, "graph-panel-title").text == "Harald Hardrada")
    chunks = browser.find_elements(By.CSS_SELECTOR, "#graph-chunks .chunk-text")
    assert chunks and all("Harald Hardrada" in c.text for c in chunks)
    assert "freq" in browser.find_element(By.ID, "graph-props").text
    legend = browser.find_element(By.ID, "graph-legend").text
    assert "Entity" in legend and "Chunk" in legend
    screenshot(browser, "graph_entity")

    # a person clicks a neighbour (its panel opens), then double-clicks it: its neighbours join the drawing
    canvas = browser.find_element(By.ID, "graph-canvas")
    before = _count(browser)
    # the saga's chunk: its other entities (Stamford Bridge, September...) are not drawn yet
    target = browser.execute_script(
        "return window.NeoRAG.graph.cy.nodes('[label = \"Chunk\"]').filter("
        "n => (n.data('title') || '').includes('saga')).map(n => n.id())[0];")
    assert target and target.startswith("c:")
    ActionChains(browser).move_to_element_with_offset(canvas, *_node_at(browser, target)).click().perform()
    _wait(browser, lambda d: d.find_element(By.ID, "graph-panel-title").text != "Harald Hardrada")
    ActionChains(browser).move_to_element_with_offset(
        canvas, *_node_at(browser, target)
    ).double_click().perform()
    _wait(browser, lambda d: _count(d) > before)
    assert "expanded" in browser.find_element(By.ID, "graph-meta").text
    screenshot(browser, "graph_expanded")
    assert console_errors(browser) == []


def test_why_this_answer_shows_the_sources(browser: WebDriver, base_url: str) -> None:
    _open(browser, base_url, "ask")
    browser.find_element(By.ID, "ask-question").send_keys("Where did Harald Hardrada die?")
    browser.find_element(By.ID, "ask-send").click()
    why = _wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, ".turn.assistant button.why") or None)[0]
    sources = browser.find_elements(By.CSS_SELECTOR, ".turn.assistant li.source")
    assert sources
    why.click()
    _wait(browser, lambda d: d.find_element(By.ID, "view-graph").is_displayed())
    _wait(browser, lambda d: _count(d, "[?answer_source]") > 0)
    drawn = browser.execute_script(
        "return window.NeoRAG.graph.cy.nodes('[?answer_source]').map((n) => n.data('rank'))"
    )
    assert sorted(drawn) == list(range(1, len(sources) + 1))
    assert _count(browser, "[label = 'Question']") == 1
    assert _count(browser, "[?question_entity]") >= 1  # the entity linked in the question
    assert "why this answer" in browser.find_element(By.ID, "graph-meta").text
    first = browser.execute_script("return window.NeoRAG.graph.cy.nodes('[rank = 1]')[0].id()")
    canvas = browser.find_element(By.ID, "graph-canvas")
    ActionChains(browser).move_to_element_with_offset(canvas, *_node_at(browser, first)).click().perform()
    _wait(browser, lambda d: "rank" in d.find_element(By.ID, "graph-props").text)
    assert "reason" in browser.find_element(By.ID, "graph-props").text
    assert browser.find_elements(By.CSS_SELECTOR, "#graph-chunks .chunk-text")  # the source's own text
    screenshot(browser, "graph_why_this_answer")
    assert console_errors(browser) == []


def test_review_a_duplicate_proposal_and_merge_it(browser: WebDriver, base_url: str) -> None:
    _open(browser, base_url, "entities")
    browser.execute_script("localStorage.clear()")
    browser.find_element(By.ID, "dups-min").send_keys("0.5")
    browser.find_element(By.ID, "dups-go").click()
    a, b = "nfl", "national football league"
    selector = f"li.dup[data-a='{a}'][data-b='{b}'], li.dup[data-a='{b}'][data-b='{a}']"
    card = _wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, selector) or None, 60)[0]
    assert "acronym" in card.text and "mentions" in card.text
    keep = card.find_element(By.CSS_SELECTOR, "input[value='national football league']")
    keep.click()
    assert "keep" in (keep.find_element(By.XPATH, "./ancestor::label").get_attribute("class") or "")
    screenshot(browser, "entities_proposals")
    card.find_element(By.CSS_SELECTOR, "button.dup-merge").click()
    _wait(browser, lambda d: "merged" in (card.get_attribute("class") or ""))
    status = card.find_element(By.CSS_SELECTOR, ".dup-status").text
    # the survivor keeps its key; its display name is its most frequent surface form ("NFL" now)
    assert status.startswith("merged “nfl” into “") and "(key national football league)" in status
    with urlopen(f"{base_url}/graph?entity=NFL") as resp:  # the old name now finds the survivor
        assert json.load(resp)["entry"]["id"] == "national football league"
    screenshot(browser, "entities_merged")
    assert console_errors(browser) == []


def test_graph_view_bad_input_shows_the_error(browser: WebDriver, base_url: str) -> None:
    _open(browser, base_url, "graph?entity=Nobody%20Here")
    error = _wait(
        browser,
        lambda d: (
            d.find_element(By.ID, "graph-error")
            if d.find_element(By.ID, "graph-error").is_displayed()
            else None
        ),
    )
    assert "HTTP 404" in error.text and "Nobody Here" in error.text
    console_errors(browser)  # the 404 itself is logged by the browser: expected
