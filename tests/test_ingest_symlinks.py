"""Every file an HTTP ingest reads is resolved and checked against the roots: symlinks out of a root (file
links, directory links, links deep inside a walked directory) are refused, never stored, never served."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.core.config import Settings
from app.store.falkor import FalkorStore
from ingest.paths import outside_roots
from tests.support.apps import app_client
from tests.support.ingest_graph import q

SECRET = "Zanzibar launch codes are kept in the blue folder."


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """root/docs/{real.md, link_out.md -> outside, sub/deep_link.md -> outside, link_in.md -> root/other},
    root/linkdir -> outside (a directory link), outside/secret.md."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text(f"# Secret\n\n{SECRET}\n")
    root = tmp_path / "root"
    (root / "docs" / "sub").mkdir(parents=True)
    (root / "other").mkdir()
    (root / "docs" / "real.md").write_text("# Real\n\nThe approval flow starts with the team lead.\n")
    (root / "other" / "inside.md").write_text("# Inside\n\nOnboarding takes two weeks.\n")
    (root / "docs" / "link_out.md").symlink_to(outside / "secret.md")
    (root / "docs" / "sub" / "deep_link.md").symlink_to(outside / "secret.md")
    (root / "docs" / "link_in.md").symlink_to(root / "other" / "inside.md")
    (root / "linkdir").symlink_to(outside, target_is_directory=True)
    return root


def _client_settings(settings: Settings, root: Path) -> Settings:
    return settings.model_copy(update={"ingest_roots": [root]})


def _sources(store: FalkorStore) -> set[str]:
    return {r["s"] for r in q(store, "MATCH (c:Chunk) RETURN DISTINCT c.source AS s")}


def _no_secret_anywhere(client: TestClient, store: FalkorStore) -> None:
    assert not any("secret" in s for s in _sources(store))
    texts = q(store, "MATCH (c:Chunk) RETURN c.text AS t")
    assert texts and not any("Zanzibar" in r["t"] for r in texts)
    passages = client.post("/retrieve", json={"query": "Zanzibar launch codes blue folder"}).json()["chunks"]
    assert passages and not any("Zanzibar" in p["contents"] for p in passages)


def test_links_out_of_the_root_are_refused_inside_a_walked_directory(settings: Settings, store: FalkorStore,
                                                                      tree: Path) -> None:
    with app_client(_client_settings(settings, tree)) as client:
        resp = client.post("/ingest", json={"path": str(tree / "docs")})
        assert resp.status_code == 200, resp.text
        result = resp.json()
        assert result["files_processed"] == 2 and result["files_failed"] == 2  # real.md, link_in.md | 2 links
        refused = {Path(e["file"]).name: e["error"] for e in result["errors"]}
        assert set(refused) == {"link_out.md", "deep_link.md"}
        assert all("outside the ingest roots" in why and "secret.md" in why for why in refused.values())
        assert _sources(store) == {str(tree / "docs" / "real.md"), str(tree / "docs" / "link_in.md")}
        _no_secret_anywhere(client, store)


def test_the_whole_root_with_a_directory_link_and_the_stream(settings: Settings, store: FalkorStore,
                                                             tree: Path) -> None:
    with app_client(_client_settings(settings, tree)) as client:
        events: list[dict[str, Any]] = []
        with client.stream("GET", "/ingest/stream", params={"path": str(tree)}) as resp:
            assert resp.status_code == 200
            events = [json.loads(line[5:]) for line in resp.iter_lines() if line.startswith("data:")]
        errors = [e for e in events if e.get("stage") == "file_error"]
        assert {Path(e["file"]).name for e in errors} == {"link_out.md", "deep_link.md"}
        assert events[-1] == {"stage": "done"}
        assert not any("linkdir" in s for s in _sources(store))  # a linked directory is not walked
        _no_secret_anywhere(client, store)


@pytest.mark.parametrize("target", ["docs/link_out.md", "docs/sub/deep_link.md", "linkdir",
                                    "linkdir/secret.md"])
def test_asking_for_a_link_out_directly_is_403(settings: Settings, tree: Path, target: str) -> None:
    with app_client(_client_settings(settings, tree)) as client:
        resp = client.post("/ingest", json={"path": str(tree / target)})
        assert resp.status_code == 403 and "outside the ingest roots" in resp.json()["message"]
        stream = client.get("/ingest/stream", params={"path": str(tree / target)})
        assert stream.status_code == 403


def test_outside_roots_unit(tree: Path) -> None:
    roots = [tree]
    assert outside_roots(tree / "docs" / "real.md", roots) is None
    assert outside_roots(tree / "docs" / "link_in.md", roots) is None
    assert "outside the ingest roots" in (outside_roots(tree / "docs" / "link_out.md", roots) or "")
    assert outside_roots(tree / "docs" / "link_out.md", None) is None  # the CLI reads what it is given
    (tree / "docs" / "dangling.md").symlink_to(tree / "nowhere.md")
    assert "cannot be resolved" in (outside_roots(tree / "docs" / "dangling.md", roots) or "")


def test_odd_paths_are_403_or_404_never_a_server_error(settings: Settings, tree: Path) -> None:
    with app_client(_client_settings(settings, tree)) as client:
        for path, status in [("~nosuchuser-xyz/docs", 403), (str(tree / ("n" * 300)), 404),  # name too long
                             (str(tree / "/".join(["d"] * 1900)), 404), ("x" * 4096, 403),
                             ("x" * 4097, 422)]:
            resp = client.post("/ingest", json={"path": path})
            assert resp.status_code == status, (path[:50], resp.text[:200])
            assert len(resp.json()["message"]) < 1000
