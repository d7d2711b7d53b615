"""GET /ui and its assets are served from the package, with the right types, and nothing else is."""

from __future__ import annotations

import re

import pytest

from app.core.config import Settings
from app.ui import STATIC_DIR, resolve_asset
from tests.support.apps import app_client

ASSETS = {"app.js": "text/javascript", "ingest.js": "text/javascript", "ask.js": "text/javascript",
          "ranking.js": "text/javascript", "kg.js": "text/javascript", "style.css": "text/css",
          "favicon.svg": "image/svg+xml", "graph.js": "text/javascript", "entities.js": "text/javascript",
          "graph.css": "text/css", "vendor/cytoscape.min.js": "text/javascript",
          "documents.js": "text/javascript", "documents.css": "text/css", "widgets.js": "text/javascript"}
# URLs a vendored library may carry in its licence header (never fetched)
LICENCE_URLS = {"http://en.wikipedia.org/wiki/MIT_License", "http://engelschall.com",
                "http://opensource.org/licenses/MIT"}


@pytest.fixture
def client(settings: Settings):  # type: ignore[no-untyped-def]
    with app_client(settings) as c:
        yield c


def test_ui_index_is_html_with_every_view(client) -> None:  # type: ignore[no-untyped-def]
    resp = client.get("/ui")
    assert resp.status_code == 200
    assert resp.headers["content-type"].startswith("text/html")
    html = resp.text
    for view in ("ingest", "documents", "ask", "ranking", "kg", "graph", "entities", "status"):
        assert f'id="view-{view}"' in html
    assert "http://" not in html and "https://" not in html, "no CDN or external URL at run time"
    assert client.get("/ui/", follow_redirects=False).status_code == 307


def test_every_referenced_asset_is_served_with_its_type(client) -> None:  # type: ignore[no-untyped-def]
    html = client.get("/ui").text
    referenced = set(re.findall(r'(?:src|href)="/ui/([^"]+)"', html))
    assert referenced == set(ASSETS), referenced
    for name, ctype in ASSETS.items():
        resp = client.get(f"/ui/{name}")
        assert resp.status_code == 200, name
        assert resp.headers["content-type"].startswith(ctype), (name, resp.headers["content-type"])
        assert resp.headers["x-content-type-options"] == "nosniff"
        assert resp.content == (STATIC_DIR / name).read_bytes()


def test_scripts_reference_no_external_url() -> None:
    for path in STATIC_DIR.rglob("*"):
        if not path.is_file() or path.suffix not in (".js", ".css", ".html", ".svg"):
            continue
        text = path.read_text(encoding="utf-8")
        found = set(re.findall(r"https?://[^\s\"')]+", text)) - LICENCE_URLS
        assert not [u for u in found if not u.startswith("http://www.w3.org/2000/svg")], (path.name, found)


def test_vendored_library_is_shipped_with_its_licence_and_record() -> None:
    vendor = STATIC_DIR / "vendor"
    assert (vendor / "cytoscape.LICENSE").read_text(encoding="utf-8").startswith("Copyright")
    readme = (vendor / "README.md").read_text(encoding="utf-8")
    assert "cytoscape@3.34.4" in readme and "MIT" in readme
    assert '"3.34.4"' in (vendor / "cytoscape.min.js").read_text(encoding="utf-8")  # its version string


@pytest.mark.parametrize("name", [
    "../__init__.py", "..%2F__init__.py", "%2e%2e/%2e%2e/core/config.py", "static/../../api/main.py",
    "nope.js", ".hidden.css", "....//app.js", "app.js%2F..%2F..%2F__init__.py", "..\\__init__.py",
    "%00app.js",
])
def test_traversal_and_unknown_names_are_404(client, name: str) -> None:  # type: ignore[no-untyped-def]
    resp = client.get(f"/ui/{name}")
    assert resp.status_code == 404, (name, resp.status_code)
    assert "import" not in resp.text


def test_resolve_asset_rejects_outside_and_unknown_types(tmp_path) -> None:  # type: ignore[no-untyped-def]
    assert resolve_asset("app.js") == STATIC_DIR / "app.js"
    for bad in ("", "/etc/passwd", "../../core/config.py", "a//b.js", "./app.js", "x.py"):
        assert resolve_asset(bad) is None, bad
