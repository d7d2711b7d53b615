"""Whole-graph rows of a KG load: which entities and edges are new, and their positional batches.

The loader knows which ``KGEntity`` nodes it created itself (:class:`LoadedGraph`): an edge with such an
end that this load has not written yet cannot exist, so it is CREATEd; every other edge goes through
MERGE (refcounted by ``KG_REL.samples``). Edges bind their ends by position in a per-batch entity list,
so a statement looks each entity up once, not once per edge.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from app.kg.browse import WRITE_ROWS
from app.kg.keys import entity_key, entity_lkey
from app.store.base import GraphStore
from ingest.kg.records import Triple


@dataclass
class LoadedGraph:
    """What one load knows of the dataset graph: entity names seen (True: created by this load) and the
    edges it wrote that touch an entity it created (hashes: a collision only sends an edge to MERGE)."""

    dataset: str
    sample_edges: bool = False  # also write each sample's triples as KG_FACT edges
    entities: dict[str, bool] = field(default_factory=dict)
    written: set[int] = field(default_factory=set)

    def new_entities(self, store: GraphStore, names: Iterable[str]) -> list[dict[str, str]]:
        """``kg_entity_create`` rows for the names of ``names`` that are in the store nowhere yet (one
        read for the names this load has not seen); they count as created from now on."""
        unseen = sorted({n for n in names if n not in self.entities})
        if not unseen:
            return []
        existing: set[str] = set()
        for start in range(0, len(unseen), WRITE_ROWS):
            keys = [entity_key(self.dataset, n) for n in unseen[start:start + WRITE_ROWS]]
            existing |= {row["key"] for row in store.run("kg_entity_existing", {"keys": keys})}
        rows = []
        for name in unseen:
            key = entity_key(self.dataset, name)
            created = key not in existing
            self.entities[name] = created
            if created:
                rows.append({"key": key, "lkey": entity_lkey(self.dataset, name), "name": name})
        return rows

    def split_edges(self, counts: Counter[Triple]) -> tuple[Counter[Triple], Counter[Triple]]:
        """(edges certainly new: CREATE, edges that may exist: MERGE)."""
        create: Counter[Triple] = Counter()
        merge: Counter[Triple] = Counter()
        entities, written = self.entities, self.written
        for triple, n in counts.items():
            h, _, t = triple
            if entities.get(h) or entities.get(t):
                code = hash(triple)
                if code not in written:
                    written.add(code)
                    create[triple] = n
                    continue
            merge[triple] = n
        return create, merge


def edge_batches(dataset: str, counts: Counter[Triple]) -> Iterable[dict[str, Any]]:
    """``kg_rel_create`` / ``kg_rel_merge_at`` params per ``WRITE_ROWS`` distinct triples: the batch's
    entity keys once each, edges pointing at them by position."""
    items = list(counts.items())
    for start in range(0, len(items), WRITE_ROWS):
        pos: dict[str, int] = {}
        rows: list[dict[str, Any]] = []
        for (h, r, t), n in items[start:start + WRITE_ROWS]:
            hi = pos.setdefault(h, len(pos))
            ti = pos.setdefault(t, len(pos))
            rows.append({"h": hi, "r": r, "t": ti, "n": n})
        yield {"ents": [entity_key(dataset, name) for name in pos], "rows": rows}
