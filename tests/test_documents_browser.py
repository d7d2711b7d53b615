"""The Documents view in a real headless Chromium against a real uvicorn server, as a person uses it: upload
two files with the file picker and one by drag and drop, watch each file's bar reach done, find them in
the list and their chunks' pages/lines in the details, ask a question and see "p. N" / "lines a-b" next to
the sources, delete a document and see it gone from the list and from the answers. Screenshots land in
tests/artifacts/."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from selenium.webdriver.common.by import By

from app.core.config import Settings
from app.store.embedded import ServerInfo
from tests.browser.driver import WebDriver, console_errors, screenshot
from tests.browser.fixtures import drop_graph, page_settings
from tests.browser.fixtures import open_view as _open
from tests.browser.fixtures import wait_for as _wait
from tests.browser.server import LiveServer, live_server
from tests.support.pdf import write_pdf

pytestmark = pytest.mark.browser

GUIDE = """# Boiler guide

The boiler heats water for the radiators of the Ridgeway building.

## Maintenance

### Pressure

Check the pressure gauge every month.
Top up the circuit when the needle falls below one bar.

### Burner

Clean the burner nozzle once a year.
A yellow flame means the nozzle is dirty.
"""
MANUAL_PAGES = [
    ["Heating manual for the Ridgeway building, written for the caretakers who look after the plant room",
     "and its pumps, valves and controls throughout the year."],
    ["Chapter two lists the spare parts that the caretakers keep in the plant room cupboard, with their",
     "order numbers and the supplier that delivers them."],
    ["The expansion vessel must be checked by a certified engineer every two years."],
]
# Records every state each upload row goes through (the bars move faster than a poll could see).
WATCH_STATES = """
window.__states = {};
new MutationObserver((records) => {
  for (const r of records) {
    const row = r.target.closest && r.target.closest('#docs-uploads tbody tr');
    if (!row) continue;
    const seen = window.__states[row.dataset.name] = window.__states[row.dataset.name] || [];
    if (seen[seen.length - 1] !== row.dataset.state) seen.push(row.dataset.state);
  }
}).observe(document.getElementById('docs-uploads'), {subtree: true, attributes: true, childList: true,
                                                      attributeFilter: ['data-state']});
"""
DROP_FILE = """
const dt = new DataTransfer();
dt.items.add(new File([arguments[0]], 'dropped-notes.txt', {type: 'text/plain'}));
const zone = document.getElementById('docs-drop');
for (const type of ['dragenter', 'dragover', 'drop']) {
  zone.dispatchEvent(new DragEvent(type, {bubbles: true, cancelable: true, dataTransfer: dt}));
}
"""


@pytest.fixture(scope="module")
def doc_settings(falkor_server: ServerInfo, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Settings]:
    tmp = tmp_path_factory.mktemp("documents_ui")
    settings = page_settings(falkor_server, "docs", uploads_dir=tmp / "uploads", ingest_roots=[tmp / "data"],
                             ingest_chunk_size=200, ingest_chunk_overlap=0)
    yield settings
    drop_graph(falkor_server, settings)


@pytest.fixture(scope="module")
def live(doc_settings: Settings) -> Iterator[LiveServer]:
    with live_server(doc_settings) as server:
        yield server


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("to_upload")
    guide = folder / "boiler-guide.md"
    guide.write_text(GUIDE, encoding="utf-8")
    return {"guide": guide, "manual": write_pdf(folder / "heating-manual.pdf", MANUAL_PAGES)}


def _listed(browser: WebDriver) -> dict[str, dict[str, str]]:
    out = {}
    for row in browser.find_elements(By.CSS_SELECTOR, "#docs-table tbody tr[data-id]"):
        cells = row.find_elements(By.TAG_NAME, "td")
        out[row.get_attribute("data-name") or ""] = {"id": row.get_attribute("data-id") or "",
                                                     "chunks": cells[1].text, "entities": cells[2].text}
    return out


def _ask(browser: WebDriver, question: str) -> list[Any]:
    box = browser.find_element(By.ID, "ask-question")
    box.clear()
    box.send_keys(question)
    before = len(browser.find_elements(By.CSS_SELECTOR, ".turn.assistant"))
    browser.find_element(By.ID, "ask-send").click()
    _wait(browser, lambda d: len(d.find_elements(By.CSS_SELECTOR, ".turn.assistant .sources")) > before)
    turn = browser.find_elements(By.CSS_SELECTOR, ".turn.assistant")[-1]
    return turn.find_elements(By.CSS_SELECTOR, "li.source")


def test_upload_watch_list_ask_with_locations_and_delete(browser: WebDriver, live: LiveServer,
                                                         files: dict[str, Path],
                                                         doc_settings: Settings) -> None:
    _open(browser, live.url, "documents")
    _wait(browser, lambda d: "Nothing stored yet" in d.find_element(By.ID, "docs-table").text, 10)
    assert ".pdf" in browser.find_element(By.ID, "docs-limits").text
    browser.execute_script(WATCH_STATES)
    # two files through the file picker, one by drag and drop
    browser.find_element(By.ID, "docs-file").send_keys(f"{files['guide']}\n{files['manual']}")
    browser.execute_script(DROP_FILE,
                           "Night setback lowers the radiator temperature after ten in the evening.")
    rows = _wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#docs-uploads tbody tr")
                 if len(d.find_elements(By.CSS_SELECTOR, "#docs-uploads tbody tr")) == 3 else None)
    _wait(browser, lambda d: all(r.get_attribute("data-state") in ("done", "error") for r in rows), 120)
    for row in rows:
        assert row.get_attribute("data-state") == "done", row.text
        bar = row.find_element(By.CSS_SELECTOR, "[role=progressbar]")
        assert bar.get_attribute("aria-valuenow") == "100"
        assert "complete" in (bar.get_attribute("class") or "")
        assert "chunks" in row.find_element(By.CSS_SELECTOR, "td.state-cell").text
    states = browser.execute_script("return window.__states")
    for name in ("boiler-guide.md", "heating-manual.pdf", "dropped-notes.txt"):
        seen = states[name]
        assert seen[-1] == "done" and "ingesting" in seen, seen
        assert seen.index("ingesting") < seen.index("done"), seen
    listed = _wait(browser, lambda d: _listed(d) if len(_listed(d)) == 3 else None, 20)
    assert listed["boiler-guide.md"]["chunks"] == "3" and listed["heating-manual.pdf"]["chunks"] == "3"
    assert int(listed["boiler-guide.md"]["entities"]) > 0
    screenshot(browser, "documents_uploaded")

    browser.find_element(By.CSS_SELECTOR, '#docs-table tr[data-name="boiler-guide.md"] a.doc-name').click()
    chunks = _wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#docs-chunks li.chunk") or None, 10)
    assert [c.find_element(By.CSS_SELECTOR, ".loc").text for c in chunks] == [
        "line 3", "lines 9-10", "lines 14-15"]
    assert chunks[2].find_element(By.CSS_SELECTOR, ".section").text == "Boiler guide > Maintenance > Burner"
    assert browser.find_elements(By.CSS_SELECTOR, "#docs-entities li")
    screenshot(browser, "documents_detail")
    assert console_errors(browser) == []

    _open(browser, live.url, "ask")
    sources = _ask(browser, "Who must check the expansion vessel?")
    manual_id = listed["heating-manual.pdf"]["id"]
    first = sources[0]
    assert first.get_attribute("data-id").startswith(manual_id)
    assert first.find_element(By.CSS_SELECTOR, ".loc").text == "p. 3"
    sources = _ask(browser, "How often is the burner nozzle cleaned?")
    locs = {s.get_attribute("data-id"): s.find_element(By.CSS_SELECTOR, ".loc").text for s in sources}
    guide_id = listed["boiler-guide.md"]["id"]
    assert locs[next(i for i in locs if i.startswith(guide_id))].startswith("line")
    assert "lines 14-15" in locs.values()
    screenshot(browser, "documents_ask_locations")
    assert console_errors(browser) == []

    _open(browser, live.url, "documents")
    _wait(browser, lambda d: len(_listed(d)) == 3, 10)
    button = browser.find_element(By.CSS_SELECTOR,
                                  f'#docs-table tr[data-id="{manual_id}"] [data-action=delete]')
    button.click()
    assert button.text == "Confirm delete"
    button.click()
    _wait(browser, lambda d: set(_listed(d)) == {"boiler-guide.md", "dropped-notes.txt"}, 20)
    notice = browser.find_element(By.ID, "docs-notice").text
    assert "Deleted heating-manual.pdf: 3 chunk(s)" in notice and "uploaded file removed" in notice
    screenshot(browser, "documents_deleted")
    _open(browser, live.url, "ask")
    sources = _ask(browser, "Who must check the expansion vessel?")
    assert sources and not any(s.get_attribute("data-id").startswith(manual_id) for s in sources)
    assert console_errors(browser) == []
    uploads = Path(doc_settings.uploads_dir)
    assert not list(uploads.rglob("*.pdf")) and len(list(uploads.rglob("*.md"))) == 1  # the file is gone too


def test_refused_file_shows_the_reason_in_its_row(browser: WebDriver, live: LiveServer,
                                                  tmp_path: Path) -> None:
    bad = tmp_path / "tool.exe"
    bad.write_bytes(b"MZ")
    _open(browser, live.url, "documents")
    _wait(browser, lambda d: d.find_element(By.ID, "docs-limits").text != "…", 10)
    browser.find_element(By.ID, "docs-file").send_keys(str(bad))
    row = _wait(browser, lambda d: d.find_element(By.CSS_SELECTOR, '#docs-uploads tr[data-name="tool.exe"]'))
    _wait(browser, lambda d: row.get_attribute("data-state") == "error", 10)
    assert "unsupported type .exe" in row.find_element(By.CSS_SELECTOR, "td.state-cell").text
    screenshot(browser, "documents_refused")
    assert console_errors(browser) == []
