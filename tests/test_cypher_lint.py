"""Every Neo4j-dialect statement passes Neo4j's own Cypher parser (npm @neo4j-cypher/language-support).

The statements are globbed at test time through ``CypherLibrary(root, "neo4j")`` (shared files plus
``cypher/neo4j`` overrides), so statements added later are linted too. One node process lints all.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from app.core.config import REPO_ROOT
from app.store.cypher_library import CypherLibrary

LINT_SCRIPT = REPO_ROOT / "tests" / "lint" / "lint.mjs"
LINT_DIR = REPO_ROOT / "tests" / ".lint"
PACKAGE = LINT_DIR / "node_modules" / "@neo4j-cypher" / "language-support"


def _require_tools() -> str:
    """Path of node; fails (never skips) with the fix when node or the linter is missing."""
    node = shutil.which("node")
    if node is None:
        pytest.fail("node is not on PATH: the Cypher lint needs Node.js/npm -> install Node.js 18+, "
                    "then run `bash scripts/test-tools.sh`")
    if not PACKAGE.is_dir():
        pytest.fail(f"{PACKAGE} is missing: the pinned linter is not installed "
                    "-> run `bash scripts/test-tools.sh`")
    return node


def lint(statements: list[dict[str, str]]) -> list[dict[str, Any]]:
    """Diagnostics for ``[{file, text}]`` from one node invocation."""
    node = _require_tools()
    proc = subprocess.run([node, str(LINT_SCRIPT)], input=json.dumps(statements), capture_output=True,
                          text=True, timeout=120, check=False)
    assert proc.returncode == 0, f"lint.mjs failed: {proc.stderr.strip()}"
    diagnostics: list[dict[str, Any]] = json.loads(proc.stdout)
    return diagnostics


def blocking(diagnostics: list[dict[str, Any]]) -> list[str]:
    """Error-severity diagnostics other than undeclared parameters, as 'file:line: message'."""
    return [f"{d['file']}:{d['line']}: {d['message']}" for d in diagnostics
            if d["severity"] == "error" and not d["param"]]


def neo4j_statements(root: Path) -> list[dict[str, str]]:
    """Every statement the Neo4j backend would run, with its file path."""
    library = CypherLibrary(root, "neo4j")
    return [{"file": str(s.path), "text": s.text} for s in (library.get(n) for n in library.names())]


def test_every_neo4j_statement_parses() -> None:
    statements = neo4j_statements(REPO_ROOT / "cypher")
    shared = list((REPO_ROOT / "cypher").glob("*.cypher"))
    overrides = list((REPO_ROOT / "cypher" / "neo4j").glob("*.cypher"))
    assert overrides and shared, "cypher/ and cypher/neo4j/ must hold statements"
    linted = {Path(s["file"]) for s in statements}
    assert set(overrides) <= linted
    errors = blocking(lint(statements))
    assert not errors, "Neo4j's parser rejects:\n" + "\n".join(errors)


def test_lint_fails_on_a_broken_statement(tmp_path: Path) -> None:
    (tmp_path / "neo4j").mkdir()
    (tmp_path / "good.cypher").write_text("// Fine. Params: $ids.\nUNWIND $ids AS i RETURN i\n")
    (tmp_path / "neo4j" / "broken.cypher").write_text("// Missing paren. Params: none.\nMATCH (n RETURN n\n")
    (tmp_path / "undefined_var.cypher").write_text("// Unknown variable. Params: none.\nMATCH (n) RETURN m\n")
    errors = blocking(lint(neo4j_statements(tmp_path)))
    assert len(errors) == 2, errors
    broken, undefined = str(tmp_path / "neo4j" / "broken.cypher"), str(tmp_path / "undefined_var.cypher")
    assert any(e.startswith(broken) and "Invalid input" in e for e in errors)
    assert any(e.startswith(undefined) and "`m` not defined" in e for e in errors)


def test_undeclared_parameters_alone_do_not_fail() -> None:
    diagnostics = lint([{"file": "p.cypher", "text": "// P. Params: $x.\nRETURN $x AS x"}])
    assert [d["param"] for d in diagnostics] == [True]
    assert blocking(diagnostics) == []
