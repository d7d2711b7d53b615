"""The /ui page in a real headless Chromium against a real uvicorn server on the embedded store.

One server and one browser for the whole module (the views share the graph: ingest first, then ask,
preview and KG). Screenshots of every view land in tests/artifacts/ (git-ignored).
"""

from __future__ import annotations

import json
import re
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from selenium.webdriver.common.by import By

from app.core.config import Settings
from app.store.cypher_library import CypherLibrary
from app.store.embedded import ServerInfo
from app.store.falkor import FalkorStore
from tests.browser.driver import WebDriver, console_errors, screenshot
from tests.browser.fixtures import drop_graph
from tests.browser.fixtures import open_view as _open
from tests.browser.fixtures import wait_for as _wait
from tests.browser.server import LiveServer, live_server
from tests.conftest import FIXTURES
from tests.support.fake_openai import ScriptedOpenAI

pytestmark = pytest.mark.browser

CORPUS = FIXTURES / "ui" / "corpus"


ANSWER = ("The team lead reviews the request first [S1]. "
          "Requests above 5,000 euros also need the finance controller [S2].")


SLOW_RELATION = {"sleep": 0.4, "content": '{"relations": [{"type": "FOLLOWS", "confidence": 0.8, '
                                          '"direction": "A->B"}]}'}


def _answer(body: dict[str, Any]) -> str | dict[str, Any]:
    """The fake LLM: slow relation labels (ingest), the question back for a rewrite prompt, else an answer
    citing S1 and S2."""
    messages = body.get("messages") or []
    system = str(messages[0].get("content", "")) if messages else ""
    if system.startswith("You label semantic relations"):
        return SLOW_RELATION
    if "llm is down" in json.dumps(messages).lower():
        return {"status": 500}
    if system.startswith("Rewrite"):
        return str(messages[-1].get("content", "")).rsplit("Last question:", 1)[-1].strip()
    if "llm fails mid-stream" in json.dumps(messages).lower():
        return {"content": ANSWER, "fail_after_chunks": 3}  # 21 characters, then the connection drops
    return ANSWER


@pytest.fixture(scope="module")
def fake_llm() -> Iterator[ScriptedOpenAI]:
    with ScriptedOpenAI(default=_answer) as llm:
        yield llm


@pytest.fixture(scope="module")
def ui_settings(falkor_server: ServerInfo, fake_llm: ScriptedOpenAI,
                tmp_path_factory: pytest.TempPathFactory) -> Iterator[Settings]:
    """Settings on this module's own graph, an ingest root holding the small corpus, the fake LLM."""
    root = tmp_path_factory.mktemp("ui_roots")
    shutil.copytree(CORPUS, root / "corpus")
    values: dict[str, Any] = {
        "backend": "embedded", "falkor_data_dir": falkor_server.data_dir, "falkor_port": falkor_server.port,
        "graph_name": f"ui_{uuid.uuid4().hex[:10]}", "llm_base_url": fake_llm.base_url,
        "ingest_roots": [root], "ingest_llm_relations": "on"}
    settings = Settings(**values)
    yield settings
    drop_graph(falkor_server, settings)


@pytest.fixture(scope="module")
def live(ui_settings: Settings) -> Iterator[LiveServer]:
    with live_server(ui_settings) as server:
        yield server


@pytest.fixture(scope="module")
def base_url(live: LiveServer) -> str:
    return live.url


def test_every_tab_switches_view_without_errors(browser: WebDriver, base_url: str) -> None:
    _open(browser, base_url, "ingest")
    for view in ("ask", "ranking", "kg", "status", "ingest"):
        browser.find_element(By.ID, f"tab-{view}").click()
        _wait(browser, lambda d, v=view: d.find_element(By.ID, f"view-{v}").is_displayed(), 5)
        shown = [s.get_attribute("id") for s in browser.find_elements(By.CSS_SELECTOR, "section.view")
                 if s.is_displayed()]
        assert shown == [f"view-{view}"]
        assert "active" in (browser.find_element(By.ID, f"tab-{view}").get_attribute("class") or "")
    assert console_errors(browser) == []


def _ingest(browser: WebDriver, path: Path | str, incremental: bool = False) -> None:
    field = browser.find_element(By.ID, "ingest-path")
    field.clear()
    field.send_keys(str(path))
    box = browser.find_element(By.ID, "ingest-incremental")
    if box.is_selected() != incremental:
        box.click()
    browser.find_element(By.ID, "ingest-start").click()


def _counts(browser: WebDriver) -> dict[str, str]:
    rows = browser.find_elements(By.CSS_SELECTOR, "#ingest-counts tbody tr")
    return {r.get_attribute("data-key") or "": r.find_element(By.TAG_NAME, "td").text for r in rows}


def test_ingest_streams_progress_to_100_and_shows_counts(browser: WebDriver, base_url: str,
                                                        ui_settings: Settings) -> None:
    root = Path(ui_settings.ingest_roots[0])
    shutil.copytree(CORPUS, root / "browser_ingest")
    _open(browser, base_url, "ingest")
    _wait(browser, lambda d: str(root.resolve()) in d.find_element(By.ID, "ingest-roots").text, 10)
    options = [o.get_attribute("value")
               for o in browser.find_elements(By.CSS_SELECTOR, "#ingest-paths option")]
    assert str((root / "browser_ingest").resolve()) in options
    _ingest(browser, root / "browser_ingest")
    _wait(browser, lambda d: d.find_element(By.ID, "ingest-state").text.lower() in ("done", "error"), 90)
    assert browser.find_element(By.ID, "ingest-state").text.lower() == "done", \
        browser.find_element(By.ID, "ingest-error").text
    overall = browser.find_element(By.ID, "ingest-overall")
    assert overall.get_attribute("aria-valuenow") == "100"
    rows = browser.find_elements(By.CSS_SELECTOR, "#ingest-stages tr[data-stage]")
    stages = {r.get_attribute("data-stage"): r for r in rows}
    assert {"scan_input", "embedding_progress"} <= set(stages)
    emb = stages["embedding_progress"]
    current, total = (int(x) for x in emb.find_element(By.CSS_SELECTOR, "td.counts").text.split(" / "))
    assert current == total > 0
    for row in stages.values():
        assert row.find_element(By.CSS_SELECTOR, "[role=progressbar]").get_attribute("aria-valuenow") == "100"
    counts = _counts(browser)
    assert counts["files_processed"] == "3"
    assert int(counts["chunks_new"]) == total
    assert "stream opened" in browser.find_element(By.ID, "ingest-log").text
    assert not browser.find_element(By.ID, "ingest-error").is_displayed()
    assert browser.find_element(By.ID, "ingest-start").is_enabled()
    screenshot(browser, "ingest")
    assert console_errors(browser) == []


def test_ingest_outside_the_roots_shows_the_error_in_place(browser: WebDriver, base_url: str,
                                                          tmp_path: Path) -> None:
    _open(browser, base_url, "ingest")
    _ingest(browser, tmp_path)
    _wait(browser, lambda d: d.find_element(By.ID, "ingest-state").text.lower() == "error", 20)
    error = browser.find_element(By.ID, "ingest-error")
    assert error.is_displayed()
    assert "HTTP 403" in error.text and "root" in error.text.lower()
    assert not browser.find_element(By.ID, "ingest-resume").is_displayed()
    screenshot(browser, "ingest_error")
    console_errors(browser)  # the refused stream logs its 403: expected


def _long_document(paragraphs: int = 9) -> str:
    topics = ["approval", "budget", "supplier", "ledger", "review", "contract", "invoice", "audit", "payment"]
    return "# Long procurement handbook\n\n" + "\n\n".join(
        f"Section {i}: the {topics[i % len(topics)]} step. " + " ".join(
            f"In step {i} the {topics[(i + j) % len(topics)]} team records item {j} and checks it twice."
            for j in range(10)) for i in range(paragraphs))


def test_ingest_disconnect_shows_resumable_state_and_resume_completes(
        browser: WebDriver, base_url: str, live: LiveServer, ui_settings: Settings) -> None:
    folder = Path(ui_settings.ingest_roots[0]) / "long"
    folder.mkdir()
    (folder / "handbook.md").write_text(_long_document(), encoding="utf-8")
    _open(browser, base_url, "ingest")
    _ingest(browser, folder)
    # LLM relation labelling is slow (0.4 s per pair): drop the connection while it runs.
    relation_row = 'tr[data-stage="relation_extraction"]'
    _wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, relation_row) or None, 60)
    assert live.drop_connections() >= 1
    _wait(browser, lambda d: d.find_element(By.ID, "ingest-state").text.lower() == "disconnected", 20)
    resume = browser.find_element(By.ID, "ingest-resume")
    assert resume.is_displayed() and "relation_extraction" in resume.text
    overall = browser.find_element(By.ID, "ingest-overall")
    assert int(overall.get_attribute("aria-valuenow") or 0) < 100
    assert "interrupted" in overall.text
    screenshot(browser, "ingest_disconnected")
    browser.find_element(By.ID, "ingest-resume-btn").click()
    # The interrupted run finishes on the server first (409 -> the page waits and retries), then the resume
    # skips everything already written.
    _wait(browser, lambda d: d.find_element(By.ID, "ingest-state").text.lower() in ("done", "error"), 90)
    assert browser.find_element(By.ID, "ingest-state").text.lower() == "done", \
        browser.find_element(By.ID, "ingest-error").text
    counts = _counts(browser)
    assert counts["chunks_new"] == "0" and int(counts["chunks_skipped"]) == int(counts["chunks_total"]) > 3
    assert counts["incremental"] == "yes"
    assert browser.find_element(By.ID, "ingest-overall").get_attribute("aria-valuenow") == "100"
    console_errors(browser)  # the offline stream and the 409s are expected


@pytest.fixture(scope="module")
def corpus_root(ui_settings: Settings) -> Path:
    return Path(ui_settings.ingest_roots[0]) / "corpus"


@pytest.fixture(scope="module")
def ingested(ui_settings: Settings, corpus_root: Path, base_url: str) -> Path:
    """The corpus is in the graph (incremental: a no-op when the browser ingest already did it)."""
    from app.services.container import build_services
    from ingest.options import IngestOptions
    from ingest.pipeline import ingest_path

    services = build_services(ui_settings, start_embedded=False)
    try:
        ingest_path(services, corpus_root, IngestOptions(incremental=True, llm_relations=False))
    finally:
        services.store.close()
    return corpus_root


def test_ask_streams_answer_with_linked_sources(browser: WebDriver, base_url: str, ingested: Path,
                                                fake_llm: ScriptedOpenAI) -> None:
    _open(browser, base_url, "ask")
    box = browser.find_element(By.ID, "ask-question")
    box.send_keys("Who reviews a purchase request?")
    browser.find_element(By.ID, "ask-send").click()
    sources = _wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, ".turn.assistant li.source") or None)
    answer = browser.find_element(By.CSS_SELECTOR, ".turn.assistant .answer")
    assert answer.text.startswith("The team lead reviews the request first")
    assert "[SOURCES]" not in answer.text and "rank=" not in answer.text
    assert "streaming" not in (answer.get_attribute("class") or "")
    cites = answer.find_elements(By.CSS_SELECTOR, "a.cite")
    assert [c.text for c in cites] == ["[S1]", "[S2]"]
    assert not answer.find_elements(By.CSS_SELECTOR, "a.cite.missing")
    first = sources[0]
    assert first.get_attribute("id") == "src-1-1"
    assert first.find_element(By.CSS_SELECTOR, ".label").text == "S1"
    assert first.find_element(By.CSS_SELECTOR, ".sid").text == first.get_attribute("data-id") != ""
    assert "score" in first.find_element(By.CSS_SELECTOR, ".scores").text
    assert first.find_element(By.CSS_SELECTOR, ".badge").text  # the reason
    preview = _wait(browser, lambda d: first.find_elements(By.CSS_SELECTOR, ".preview") or None, 10)[0]
    assert len(preview.text) > 20
    cites[1].click()
    _wait(browser, lambda d: "flash" in (d.find_element(By.ID, "src-1-2").get_attribute("class") or ""), 5)
    # The page keeps the history: the second question sends the first turn along.
    box.send_keys("And who places the order?")
    browser.find_element(By.ID, "ask-send").click()
    _wait(browser, lambda d: len(d.find_elements(By.CSS_SELECTOR, ".turn.assistant .sources")) == 2)
    answer_calls = [r for r in fake_llm.requests
                    if not str(r["messages"][0].get("content", "")).startswith("Rewrite")]
    last = answer_calls[-1]["messages"]
    assert any(m["role"] == "assistant" and m["content"].startswith("The team lead") for m in last)
    screenshot(browser, "ask")
    assert console_errors(browser) == []


def test_ask_llm_down_falls_back_to_an_extractive_answer(browser: WebDriver, base_url: str,
                                                         ingested: Path) -> None:
    _open(browser, base_url, "ask")
    browser.find_element(By.ID, "ask-use-history").click()  # a fresh question, no history
    browser.find_element(By.ID, "ask-question").send_keys("LLM is down: who approves large purchases?")
    browser.find_element(By.ID, "ask-send").click()
    _wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, ".turn.assistant li.source") or None)
    meta = browser.find_element(By.CSS_SELECTOR, ".turn.assistant .meta").text
    assert meta.startswith("extractive answer (no LLM)")
    answer = browser.find_element(By.CSS_SELECTOR, ".turn.assistant .answer").text
    assert answer and "[SOURCES]" not in answer
    assert console_errors(browser) == []


def test_ask_llm_failing_mid_stream_keeps_partial_answer_error_and_sources(
        browser: WebDriver, base_url: str, ingested: Path) -> None:
    _open(browser, base_url, "ask")
    browser.find_element(By.ID, "ask-use-history").click()  # a fresh question, no history
    browser.find_element(By.ID, "ask-question").send_keys("LLM fails mid-stream: who reviews a request?")
    browser.find_element(By.ID, "ask-send").click()
    _wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, ".turn.assistant li.source") or None)
    turn = browser.find_element(By.CSS_SELECTOR, ".turn.assistant")
    assert turn.find_element(By.CSS_SELECTOR, ".answer").text == ANSWER[:21]  # the deltas before the drop
    alert = turn.find_element(By.CSS_SELECTOR, ".alert.error").text
    assert "LLM" in alert and "[ERROR]" not in alert
    assert turn.find_element(By.CSS_SELECTOR, ".meta").text.startswith("llm answer")
    screenshot(browser, "ask-mid-stream-error")
    assert console_errors(browser) == []


def test_ask_shows_bad_input_error_in_place(browser: WebDriver, base_url: str) -> None:
    _open(browser, base_url, "ask")
    browser.execute_script("document.getElementById('ask-question').value = 'x'.repeat(20000);")
    browser.find_element(By.ID, "ask-send").click()
    alert = _wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, ".turn.assistant .alert.error") or None)
    assert "HTTP 4" in alert[0].text and "question" in alert[0].text
    assert all("/query" in e and "422" in e for e in console_errors(browser))  # only the expected 4xx


def test_ranking_preview_table_sorts(browser: WebDriver, base_url: str, ingested: Path) -> None:
    _open(browser, base_url, "ranking")
    browser.find_element(By.ID, "rank-question").send_keys("finance controller approval")
    browser.find_element(By.ID, "rank-go").click()
    rows = _wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#rank-table tbody tr") or None)
    assert len(rows) >= 2
    headers = [h.text for h in browser.find_elements(By.CSS_SELECTOR, "#rank-table thead th")]
    for col in ("base_norm", "bonus", "composite", "final", "reason", "rel_type"):
        assert col in headers

    def column(key: str) -> list[float]:
        cells = browser.find_elements(By.CSS_SELECTOR, f'#rank-table tbody td[data-key="{key}"]')
        return [float(c.text.replace(",", "")) for c in cells if c.text not in ("—", "")]

    assert browser.find_element(By.CSS_SELECTOR, "#rank-table tbody td.id .title").text  # the document title
    # short policy documents: the auto graph mode ranks with the multi-hop stage, and the card says so
    assert browser.find_element(By.CSS_SELECTOR, "#rank-meta .badge.graph-mode").text == "ranked by multihop"

    finals = column("final_score")
    assert finals == sorted(finals, reverse=True)  # the server's order
    # "why": the reranker's three largest shares of each score; hovering gives every share and the bias
    why = browser.find_elements(By.CSS_SELECTOR, "#rank-table tbody td.why")
    assert len(why) == len(rows)
    for cell in why:
        shares = cell.text.split("\n")  # one share per line
        assert len(shares) == 3 and all(re.fullmatch(r"[a-z_0-9]+ [+-]\d+\.\d\d", s) for s in shares)
        assert (cell.get_attribute("title") or "").startswith("bias ")
    header = browser.find_element(By.CSS_SELECTOR, '#rank-table th[data-key="base_norm"]')
    header.click()
    assert column("base_norm") == sorted(column("base_norm"), reverse=True)
    header.click()
    assert column("base_norm") == sorted(column("base_norm"))
    assert "sorted-asc" in (header.get_attribute("class") or "")
    screenshot(browser, "ranking")
    assert console_errors(browser) == []


TRIPLES = [
    ("Justin Bieber", "music.artist.album", "My World"),
    ("Justin Bieber", "music.artist.album", "Believe"),
    ("Justin Bieber", "people.person.sibling_s", "m.0gxnnwc"),
    ("m.0gxnnwc", "people.sibling_relationship.sibling", "Jaxon Bieber"),
    ("Jeremy Bieber", "people.person.children", "Justin Bieber"),
]


@pytest.fixture(scope="module")
def kg_loaded(ui_settings: Settings, base_url: str) -> str:
    """One tiny RoG-shaped sample in dataset webqsp, loaded with the KG loader."""
    from ingest.kg.loader import load_records
    from ingest.kg.records import KGRecord

    store = FalkorStore(CypherLibrary(ui_settings.cypher_dir, "falkordb"), "127.0.0.1",
                        ui_settings.falkor_port, ui_settings.graph_name)
    try:
        record = KGRecord(sample_id="WebQTrn-0", triples=list(TRIPLES),
                          question="what is the name of justin bieber brother", answers=["Jaxon Bieber"],
                          q_entity=["Justin Bieber"], a_entity=["Jaxon Bieber"])
        load_records(store, "webqsp", [record])
    finally:
        store.close()
    return "webqsp"


def _json(browser: WebDriver, element_id: str) -> Any:
    import json

    return json.loads(browser.find_element(By.ID, element_id).text)


def _chips(browser: WebDriver, list_id: str) -> list[str]:
    return [b.text for b in browser.find_elements(By.CSS_SELECTOR, f"#{list_id} button")]


def test_kg_explorer_relations_then_entities_with_exact_json(browser: WebDriver, base_url: str,
                                                             kg_loaded: str) -> None:
    _open(browser, base_url, "kg")
    _wait(browser, lambda d: "webqsp (1 sample, 5 triples)" in d.find_element(By.ID, "kg-loaded").text, 10)
    sample = browser.find_element(By.ID, "kg-sample")
    sample.send_keys("WebQTrn-0")
    browser.find_element(By.ID, "kg-go").click()
    _wait(browser, lambda d: _chips(d, "kg-relations") or None, 10)
    # The sample's topic entity was filled in from its stored q_entity.
    assert browser.find_element(By.ID, "kg-entity").get_attribute("value") == "Justin Bieber"
    assert "justin bieber brother" in browser.find_element(By.ID, "kg-question").text
    assert _chips(browser, "kg-relations") == ["music.artist.album", "people.person.children",
                                               "people.person.sibling_s"]
    assert _json(browser, "kg-request") == [{"action_type": "get_relations", "dataset_name": "webqsp",
                                             "sample_id": "WebQTrn-0", "entity_id": "Justin Bieber"}]
    response = _json(browser, "kg-response")
    assert response[0]["results"] == [{"relations": ["music.artist.album", "people.person.children",
                                                     "people.person.sibling_s"]}]
    assert response[0]["total_results"] == 3

    browser.find_element(By.XPATH, "//ul[@id='kg-relations']//button[.='music.artist.album']").click()
    _wait(browser, lambda d: _chips(d, "kg-tails") or None)
    assert _chips(browser, "kg-tails") == ["Believe", "My World"]
    assert _chips(browser, "kg-heads") == []
    request = _json(browser, "kg-request")
    assert [r["action_type"] for r in request] == ["get_tail_entities", "get_head_entities"]
    assert all(r["relation"] == "music.artist.album" and r["entity_id"] == "Justin Bieber" for r in request)
    assert _json(browser, "kg-response")[0]["results"] == [{"tail_entities": ["Believe", "My World"]}]
    screenshot(browser, "kg")

    # A head entity is clickable and becomes the explored entity.
    browser.find_element(By.XPATH, "//ul[@id='kg-relations']//button[.='people.person.children']").click()
    _wait(browser, lambda d: _chips(d, "kg-heads") == ["Jeremy Bieber"])
    browser.find_element(By.XPATH, "//ul[@id='kg-heads']//button[.='Jeremy Bieber']").click()
    _wait(browser, lambda d: d.find_element(By.ID, "kg-rel-entity").text == "Jeremy Bieber")
    _wait(browser, lambda d: _chips(d, "kg-relations") == ["people.person.children"])
    assert console_errors(browser) == []


def test_kg_explorer_unknown_sample_shows_the_error(browser: WebDriver, base_url: str,
                                                    kg_loaded: str) -> None:
    _open(browser, base_url, "kg")
    for field, value in (("kg-sample", "WebQTrn-404"), ("kg-entity", "Justin Bieber")):
        browser.find_element(By.ID, field).clear()
        browser.find_element(By.ID, field).send_keys(value)
    browser.find_element(By.ID, "kg-go").click()
    error = _wait(browser, lambda d: d.find_element(By.ID, "kg-error") if "could not be loaded"
                  in d.find_element(By.ID, "kg-error").text else None)
    assert "WebQTrn-404" in error.text
    assert _chips(browser, "kg-relations") == []
    console_errors(browser)  # the sample lookup's 404 is expected


def test_status_view_shows_backend_counts_index_and_llm(browser: WebDriver, base_url: str, ingested: Path,
                                                        kg_loaded: str) -> None:
    _open(browser, base_url, "status")
    card = _wait(browser, lambda d: d.find_element(By.CSS_SELECTOR, '[data-stat="backend"] .v')
                 if d.find_elements(By.CSS_SELECTOR, '[data-stat="backend"]') else None)
    assert card.text == "embedded"
    llm = browser.find_element(By.CSS_SELECTOR, '[data-stat="llm"] .v').text
    assert llm == "configured"
    vi = browser.find_element(By.CSS_SELECTOR, '[data-stat="vector index"]').text
    assert "in process" in vi and "dim 384" in vi  # exact search in process; FalkorDB keeps no vector index
    assert browser.find_element(By.CSS_SELECTOR, '[data-stat="graph"] .v').text.endswith("nodes")
    nodes = browser.execute_script(
        "return Object.fromEntries(Array.from(document.querySelectorAll('#status-nodes tbody tr'))"
        ".map((r) => [r.dataset.key, Number(r.querySelector('td').textContent.replace(/,/g, ''))]))")
    assert nodes["Chunk"] >= 3 and nodes["KGSample"] == 1
    assert browser.find_element(By.ID, "health-pill").text == "server ok"
    index_rows = browser.find_elements(By.CSS_SELECTOR, "#status-indexes tbody tr")
    assert any("FULLTEXT" in r.text for r in index_rows)
    screenshot(browser, "status")
    assert console_errors(browser) == []
