"""Loads named Cypher statements from cypher/ with per-dialect overrides.

Layout: ``cypher/<name>.cypher`` is shared; ``cypher/<dialect>/<name>.cypher``
overrides it for one backend. The first line of each file is a ``//`` comment
saying what the statement does and which parameters it takes. A further leading
comment line holding ``@auto-commit`` marks a statement that must run in an
auto-commit transaction (Neo4j's ``CALL { } IN TRANSACTIONS``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from app.core.errors import StatementError

DIALECTS = ("neo4j", "falkordb")
_WRITE_RE = re.compile(r"\b(MERGE|CREATE|SET|DELETE|REMOVE|DROP)\b|\.(create|drop)[A-Za-z]*\(", re.IGNORECASE)
_PARAM_RE = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)")
AUTOCOMMIT_FLAG = "@auto-commit"


@dataclass(frozen=True)
class Statement:
    """One named Cypher statement."""

    name: str
    text: str
    path: Path
    header: str

    @property
    def is_write(self) -> bool:
        """Whether the statement writes (decides read vs write transactions)."""
        body = "\n".join(ln for ln in self.text.splitlines() if not ln.lstrip().startswith("//"))
        return bool(_WRITE_RE.search(body))

    @property
    def autocommit(self) -> bool:
        """Whether a leading comment line says ``@auto-commit``: the statement uses ``CALL { } IN
        TRANSACTIONS``, which Neo4j runs only outside an explicit (managed) transaction."""
        for line in self.text.splitlines():
            if not line.lstrip().startswith("//"):
                return False
            if AUTOCOMMIT_FLAG in line:
                return True
        return False

    @property
    def parameters(self) -> set[str]:
        """Names of the ``$parameters`` the statement uses."""
        return set(_PARAM_RE.findall(self.text))


def _read(path: Path) -> Statement:
    text = path.read_text(encoding="utf-8").strip()
    first = text.splitlines()[0] if text else ""
    if not first.startswith("//"):
        raise StatementError(
            f"Cypher file {path} has no header comment",
            "every statement starts with a '// what it does. Params: ...' line",
            f"add a header line to {path}",
        )
    return Statement(name=path.stem, text=text, path=path, header=first.lstrip("/ ").strip())


class CypherLibrary:
    """The statements visible to one dialect (shared files plus its overrides)."""

    def __init__(self, root: Path, dialect: str) -> None:
        if dialect not in DIALECTS:
            raise StatementError(f"unknown Cypher dialect {dialect!r}", fix=f"use one of {DIALECTS}")
        if not root.is_dir():
            raise StatementError(f"Cypher directory {root} not found", fix="set NEORAG_CYPHER_DIR")
        self.root, self.dialect = root, dialect
        self._statements: dict[str, Statement] = {}
        for path in sorted(root.glob("*.cypher")):
            self._statements[path.stem] = _read(path)
        for path in sorted((root / dialect).glob("*.cypher")):
            self._statements[path.stem] = _read(path)

    def get(self, name: str) -> Statement:
        """The statement called ``name``; a clear error naming the file if absent."""
        try:
            return self._statements[name]
        except KeyError:
            raise StatementError(
                f"Cypher statement {name!r} is missing for backend {self.dialect!r}",
                f"neither {self.root / (name + '.cypher')} nor "
                f"{self.root / self.dialect / (name + '.cypher')} exists",
                "add the file (shared or dialect override)",
            ) from None

    def names(self) -> list[str]:
        """All statement names visible to this dialect."""
        return sorted(self._statements)

    def require(self, names: list[str] | tuple[str, ...]) -> None:
        """Fail at start-up, naming the file, if any of ``names`` is missing."""
        for name in names:
            self.get(name)

    def __contains__(self, name: str) -> bool:
        return name in self._statements
