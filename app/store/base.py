"""The GraphStore interface: run named statements, return plain rows."""

from __future__ import annotations

import abc
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from app.core.errors import StoreUnavailable
from app.store.cypher_library import CypherLibrary
from app.store.schema import bootstrap_schema

Row = dict[str, Any]


@dataclass(frozen=True)
class Prepared:
    """A named statement with its parameters, ready to send (see :meth:`GraphStore.prepare`)."""

    name: str
    text: str
    params: dict[str, Any]
    write: bool
    autocommit: bool = False


@dataclass
class StoreHealth:
    """Result of a health probe."""

    reachable: bool
    backend: str
    version: str | None = None
    detail: str | None = None


@dataclass
class Capabilities:
    """What this backend offers."""

    vector_index: bool = True
    vector_index_rebuilt_at_load: bool = False  # the server rebuilds it whenever it loads its data
    fulltext_index: bool = True
    lexical_scale: str = "max-normalised to (0, 1] per query"
    vector_scale: str = "cosine similarity mapped to [0, 1] as (1 + cos) / 2"
    extras: dict[str, Any] = field(default_factory=dict)


def chunked(rows: Sequence[Row] | Iterable[Row], size: int) -> Iterator[list[Row]]:
    """Yield lists of at most ``size`` rows."""
    batch: list[Row] = []
    for row in rows:
        batch.append(row)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


class GraphStore(abc.ABC):
    """A graph database that runs named Cypher statements and returns plain rows.

    Adapters convert driver values (nodes, relationships, paths) into plain
    Python values; domain code never sees a driver object.
    """

    backend: str = "abstract"
    dialect: str = "abstract"

    def __init__(self, library: CypherLibrary, batch_size: int = 2000) -> None:
        self.library = library
        self.batch_size = batch_size
        self.round_trips = 0
        self.keep_vector_index = True  # False: bootstrap leaves the chunk vector index out (see factory)

    # -- to implement -------------------------------------------------------
    @abc.abstractmethod
    def _execute(self, text: str, params: dict[str, Any], write: bool) -> list[Row]:
        """Execute one statement text and return rows as plain dicts."""

    @abc.abstractmethod
    def health(self) -> StoreHealth:
        """Probe reachability and server version (never raises)."""

    @abc.abstractmethod
    def close(self) -> None:
        """Release connections."""

    def capabilities(self) -> Capabilities:
        """Feature flags of this backend."""
        return Capabilities()

    def server_details(self) -> dict[str, Any]:
        """What the server says about itself beyond ``health`` (e.g. Neo4j's edition); {} if nothing."""
        return {}

    # -- shared behaviour ---------------------------------------------------
    def run(self, name: str, params: dict[str, Any] | None = None) -> list[Row]:
        """Run the named statement with parameters and return its rows."""
        return self.run_prepared(self.prepare(name, params))

    def prepare(self, name: str, params: dict[str, Any] | None = None) -> Prepared:
        """The named statement ready to send. A backend may encode the parameters here, so a pipelined
        writer can prepare the next statement on its own thread while the store executes this one."""
        stmt = self.library.get(name)
        return Prepared(name, stmt.text, params or {}, stmt.is_write, stmt.autocommit)

    def run_prepared(self, prepared: Prepared) -> list[Row]:
        """Send a prepared statement and return its rows."""
        self.round_trips += 1
        return self._execute(prepared.text, prepared.params, prepared.write)

    def run_batched(
        self,
        name: str,
        rows: Iterable[Row],
        batch_size: int | None = None,
        extra: dict[str, Any] | None = None,
    ) -> int:
        """Run a ``UNWIND $rows`` statement over ``rows`` in batches; returns rows sent."""
        sent = 0
        for batch in chunked(rows, batch_size or self.batch_size):
            self.run(name, {**(extra or {}), "rows": batch})
            sent += len(batch)
        return sent

    def bootstrap(self, embedding_dim: int) -> list[str]:
        """Create constraints and indexes (idempotent); returns the statements run."""
        return bootstrap_schema(self, embedding_dim, self.keep_vector_index)

    def require_reachable(self) -> None:
        """StoreUnavailable (503, with the way out) unless the store answers its health probe."""
        health = self.health()
        if not health.reachable:
            raise StoreUnavailable(f"the {health.backend} graph store is unreachable", health.detail or "",
                                   "start it (`neorag db start`) and retry")

    def wait_until_reachable(self, timeout_s: float = 10.0) -> StoreHealth:
        """Poll ``health`` until reachable or the timeout passes."""
        deadline = time.monotonic() + timeout_s
        health = self.health()
        while not health.reachable and time.monotonic() < deadline:
            time.sleep(0.2)
            health = self.health()
        return health
