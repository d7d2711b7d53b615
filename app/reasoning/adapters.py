"""Adapters from the agents' small protocols to NeoRAG's store and retrieval (in-process, no HTTP).

- :class:`StoreKGView` — StructGPT's ``KGView`` over the KG loaded by ``neorag kg load``: one sample's
  fact buckets (``KGFacts``) for a sample id, else the whole graph (``KGEntity``, ``KG_REL``).
- :func:`passage_retriever` — CoRAG's ``Retriever`` on ``app.retrieval.passages.retrieve_passages``.
- :class:`StoreEvidenceBackend` — CONVINSE's sources: KG entities linked in the question, their triples,
  and hybrid-retrieved chunks with the entities they mention.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, cast

from app.core.errors import BadInput
from app.kg import graph as kg
from app.kg.keys import entity_lkey, fold, sample_key
from app.services.container import Services

Triple = tuple[str, str, str]
_STOP = frozenset(
    "a an the of in on at to is was what which who whom whose where when how why does did do are be "
    "by for from with as and or s 's".split()
)
MAX_NGRAM = 6


def datasets(services: Services) -> list[str]:
    """Names of the KG datasets loaded in the store."""
    return [str(d["name"]) for d in kg.list_datasets(services.store) if d.get("name")]


def pick_dataset(services: Services, dataset: str | None) -> str:
    """The dataset to reason over: the given one (must be loaded), or the only one loaded."""
    loaded = datasets(services)
    if dataset is not None:
        if dataset not in loaded:
            raise BadInput(
                f"dataset: no KG dataset {dataset!r} is loaded (loaded: {', '.join(loaded) or 'none'}); "
                "load it with `neorag kg load`",
                status=404,
                field="dataset",
            )
        return dataset
    if len(loaded) == 1:
        return loaded[0]
    raise BadInput(f"dataset: name the KG dataset (loaded: {', '.join(loaded) or 'none'})", field="dataset")


class StoreKGView:
    """``KGView`` over ``app.kg.graph`` (the KG module's in-process API), scoped to one sample
    (``sample_id``) or the dataset's whole graph, memoised for the life of one request."""

    def __init__(self, services: Services, dataset: str, sample_id: str | None = None) -> None:
        self.store, self.dataset, self.sample_id = services.store, dataset, sample_id
        self.skey = sample_key(dataset, sample_id) if sample_id is not None else None
        self._memo: dict[tuple[Any, ...], Any] = {}
        self._lock = threading.Lock()
        if self.skey is not None and not self.store.run("kg_sample_lookup", {"keys": [self.skey]}):
            raise BadInput(
                f"sample_id: sample {sample_id!r} is not loaded in dataset {dataset!r}",
                status=404,
                field="sample_id",
            )

    def _cached(self, key: tuple[Any, ...], compute: Callable[[], Any]) -> Any:
        with self._lock:
            if key in self._memo:
                return self._memo[key]
        value = compute()
        with self._lock:
            self._memo[key] = value
        return value

    def resolve(self, entity: str) -> str | None:
        """Exact name first, else case-insensitive after trimming."""
        return cast(
            str | None,
            self._cached(
                ("resolve", entity),
                lambda: kg.resolve_entity(self.store, self.dataset, entity, self.sample_id),
            ),
        )

    def relations(self, entity: str) -> list[tuple[str, str]]:
        return cast(
            list[tuple[str, str]],
            self._cached(
                ("rel", entity),
                lambda: kg.get_relations_directed(self.store, self.dataset, self.sample_id, entity),
            ),
        )

    def triples(self, entity: str, relation: str, direction: str) -> list[Triple]:
        return cast(
            list[Triple],
            self._cached(
                ("tri", entity, relation, direction),
                lambda: kg.get_triples(
                    self.store, self.dataset, self.sample_id, entity, [relation], direction
                ),
            ),
        )

    def around(self, entity: str) -> list[Triple]:
        """Every triple touching ``entity`` (both directions)."""
        return cast(
            list[Triple],
            self._cached(
                ("around", entity), lambda: kg.get_triples(self.store, self.dataset, self.sample_id, entity)
            ),
        )

    def link(self, question: str) -> list[str]:
        """KG entities named in the question: word n-grams (also underscore-joined), case-insensitive;
        a match inside a longer match is dropped."""
        cands = candidates(question)
        if not cands:
            return []
        if self.sample_id is not None:
            hits = kg.match_sample_names(self.store, self.dataset, self.sample_id, cands)
        else:
            rows = self.store.run(
                "kg_entity_by_lkey", {"keys": [entity_lkey(self.dataset, c) for c in cands]}
            )
            prefix = len(self.dataset) + 1
            hits = {str(r["lkey"])[prefix:]: str(r["name"]) for r in rows}
        spans = sorted(hits, key=len, reverse=True)
        kept: list[str] = []
        for span in spans:
            words = span.replace("_", " ")
            if any(words in k.replace("_", " ") for k in kept):
                continue
            kept.append(span)
        return list(dict.fromkeys(hits[k] for k in kept))


def candidates(question: str) -> list[str]:
    """Folded word n-grams (1..6 words) of ``question``, also underscore-joined; no stop-word unigrams."""
    words = [w.strip(".,;:!?\"'()[]") for w in question.split()]
    words = [w for w in words if w]
    out: list[str] = []
    for n in range(1, MAX_NGRAM + 1):
        for i in range(len(words) - n + 1):
            gram = words[i : i + n]
            if n == 1 and fold(gram[0]) in _STOP:
                continue
            for text in (" ".join(gram), "_".join(gram)):
                key = fold(text)
                if key not in out:
                    out.append(key)
    return out


def passage_retriever(services: Services) -> Callable[[str, int], list[dict[str, Any]]]:
    """CoRAG's retriever: NeoRAG's hybrid passage retrieval, in-process."""
    from app.retrieval.passages import retrieve_passages

    def retrieve(query: str, k: int) -> list[dict[str, Any]]:
        return retrieve_passages(services, query, k)

    return retrieve


class StoreEvidenceBackend:
    """CONVINSE sources over the store: KB facts of linked KG entities and hybrid-retrieved chunks."""

    def __init__(self, services: Services, dataset: str | None = None, sample_id: str | None = None) -> None:
        self.services = services
        loaded = datasets(services)
        if dataset is not None:
            names = [pick_dataset(services, dataset)]
        else:
            names = loaded
        self.views = [StoreKGView(services, d, sample_id if dataset is not None else None) for d in names]
        self._owner: dict[str, StoreKGView] = {}

    def link(self, question: str) -> list[str]:
        out: list[str] = []
        for view in self.views:
            for name in view.link(question):
                if name not in self._owner:
                    self._owner[name] = view
                    out.append(name)
        return out

    def triples_around(self, entity: str) -> list[Triple]:
        view = self._owner.get(entity)
        return view.around(entity) if view is not None else []

    def passages(self, query: str, k: int) -> list[dict[str, Any]]:
        from app.retrieval.passages import retrieve_passages

        found = retrieve_passages(self.services, query, k)
        ids = [str(p["id"]) for p in found]
        ents = (
            {
                str(r["id"]): r.get("entities") or []
                for r in self.services.store.run("evidence_chunk_entities", {"ids": ids})
            }
            if ids
            else {}
        )
        for p in found:
            p["entities"] = [
                {"id": str(e.get("id")), "label": str(e.get("name") or e.get("id"))}
                for e in ents.get(str(p["id"]), [])
                if e and e.get("id") is not None
            ]
        return found
