"""KG-R1's own data layout, streamed as :class:`KGRecord` (what its retrieval server reads).

    {base}/{dataset}/
        entities.txt        the entity vocabulary, one Freebase MID per line
        entities_text.txt   optional: one name per line, aligned with entities.txt
        relations.txt       the relation vocabulary, one per line
        train_simple.json   JSON Lines: {"id", "question", "answers": [{"kb_id", "text"}], "entities": [i],
        test_simple.json                 "subgraph": {"tuples": [[h, r, t], ...], "entities": [i, ...]}}

Indices point into the vocabularies. Read the way KG-R1's server (``kg_r1/search/knowledge_graph.py``)
reads them, so names and indices agree with it: vocabulary lines are stripped and blank lines dropped;
samples are keyed by their JSON ``id`` (a request's ``sample_id`` is that ``id``), ids that are empty are
skipped, and when both splits hold an id the test split's sample is the one kept. What its index-based
matching sees beyond the triples travels in :class:`FactsExtra`: sample entities in no tuple, names in
tuples that the sample's entity list lacks, and names several vocabulary entries share. Tuples with an
index outside the vocabularies and lines that are not JSON are skipped and counted.
"""

from __future__ import annotations

import json
import logging
import uuid
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.core.errors import BadInput
from app.kg.facts import FactsExtra
from app.kg.keys import fold
from app.store.base import GraphStore
from ingest.kg.records import KGRecord, Triple

log = logging.getLogger(__name__)

ENTITY_NAMES = ("auto", "text", "mid")
SPLITS = ("train", "test")  # the splits KG-R1's server loads; another (e.g. dev) on request


def split_file(folder: Path, split: str) -> Path:
    return folder / f"{split}_simple.json"


def find_folder(path: Path, dataset: str) -> Path | None:
    """The KG-R1 dataset folder at ``path`` (``path/dataset``, ``path`` itself, or a child whose name
    differs from ``dataset`` only in case, e.g. ``CWQ``), or None when ``path`` is not that layout."""
    candidates = [path / dataset, path]
    if path.is_dir():
        candidates += sorted(p for p in path.iterdir() if p.is_dir() and p.name.lower() == dataset.lower())
    for folder in candidates:
        if (folder / "relations.txt").is_file() and any(folder.glob("*_simple.json")):
            return folder
    return None


def read_vocab(path: Path) -> list[str]:
    """A vocabulary file as KG-R1's server reads it: each line stripped, blank lines dropped."""
    with path.open(encoding="utf-8") as handle:
        return [s for s in (line.strip() for line in handle) if s]


@dataclass
class KGR1Source:
    """One KG-R1 dataset folder, opened: its vocabularies in memory, its samples streamed."""

    folder: Path
    entity_file: Path
    entities: list[str]
    relations: list[str]
    splits: list[str]
    skipped_lines: int = 0
    skipped_tuples: int = 0
    # strict reading (the bulk import): (where, reason) of a sample skipped whole, instead of the
    # warning and the trimmed sample of KG-R1's server
    on_bad: Callable[[str, str], None] | None = None

    @property
    def uses_mids(self) -> bool:
        return self.entity_file.name == "entities.txt"

    def records(self) -> Iterator[KGRecord]:
        """Every sample: the test split first, so an id in both splits keeps its test sample (the loader
        keeps the first it sees; KG-R1's server the last it read, and it reads test last)."""
        for split in sorted(self.splits, key=lambda s: s != "test"):
            path = split_file(self.folder, split)
            with path.open(encoding="utf-8") as handle:
                for lineno, line in enumerate(handle, 1):
                    if not line.strip():
                        continue
                    try:
                        row = json.loads(line)
                    except json.JSONDecodeError as exc:
                        self.skipped_lines += 1
                        if self.on_bad is not None:
                            self.on_bad(f"{path.name} line {lineno}", f"not JSON: {exc.msg}")
                            continue
                        log.warning("%s line %d is not JSON (%s): skipped, as KG-R1's server does",
                                    path.name, lineno, exc.msg)
                        continue
                    where = f"{path.name} line {lineno}"
                    record = self._record(row, split, where) if isinstance(row, dict) else None
                    if record is not None:
                        record.origin = where
                        yield record

    def _record(self, row: dict[str, Any], split: str, where: str = "") -> KGRecord | None:
        sample_id = row.get("id")
        if not sample_id:
            return None
        names, rels = self.entities, self.relations
        subgraph = row.get("subgraph") or {}
        index_tuples: list[tuple[int, int, int]] = []
        triples: list[Triple] = []
        n_ent, n_rel = len(names), len(rels)
        for item in subgraph.get("tuples") or ():
            try:
                h, r, t = item
                if 0 <= h < n_ent and 0 <= r < n_rel and 0 <= t < n_ent:
                    triples.append((names[h], rels[r], names[t]))
                    index_tuples.append((h, r, t))
                    continue
            except (ValueError, TypeError):
                pass
            self.skipped_tuples += 1
            if self.on_bad is not None:
                self.on_bad(where, f"tuple {item!r} is outside the vocabularies"[:300])
                return None
        members = {i for i in subgraph.get("entities") or () if isinstance(i, int) and 0 <= i < n_ent}
        answers = [_answer_text(a, self.uses_mids) for a in row.get("answers") or ()]
        return KGRecord(
            sample_id=str(sample_id), triples=triples, question=str(row.get("question") or ""),
            answers=[a for a in answers if a], q_entity=[self._name(e) for e in row.get("entities") or ()],
            a_entity=[a for a in answers if a], split=split,
            extra=self._extra(index_tuples, members),
        )

    def _name(self, value: Any) -> str:
        if isinstance(value, int) and 0 <= value < len(self.entities):
            return self.entities[value]
        if isinstance(value, dict):
            return _answer_text(value, self.uses_mids)
        return str(value)

    def _extra(self, tuples: list[tuple[int, int, int]], members: set[int]) -> FactsExtra | None:
        """What KG-R1's index-based matching sees beyond the name triples (None when nothing)."""
        names, rels = self.entities, self.relations
        used = {h for h, _, _ in tuples} | {t for _, _, t in tuples}
        used_names = {names[i] for i in used}
        member_names = {names[i] for i in members}
        extra = FactsExtra(isolated=sorted(member_names - used_names), hidden=used_names - member_names)
        if len({names[i] for i in used | members}) < len(used | members):  # a name on several entries
            for repeats, ends in ((extra.repeats_out, (0, 2)), (extra.repeats_in, (2, 0))):
                groups: dict[tuple[str, str, str], set[int]] = defaultdict(set)
                for tup in set(tuples):
                    me, other = tup[ends[0]], tup[ends[1]]
                    if me in members:
                        groups[(fold(names[me]), rels[tup[1]], names[other])].add(other)
                repeats.update({k: len(v) for k, v in groups.items() if len(v) > 1})
        if extra.isolated or extra.hidden or extra.repeats_out or extra.repeats_in:
            return extra
        return None


def _answer_text(answer: Any, mids: bool) -> str:
    if isinstance(answer, dict):
        first, second = ("kb_id", "text") if mids else ("text", "kb_id")
        return str(answer.get(first) or answer.get(second) or "")
    return str(answer) if answer is not None else ""


def open_source(folder: Path, entity_names: str = "auto", split: str | None = None,
                on_bad: Callable[[str, str], None] | None = None) -> KGR1Source:
    """Open a KG-R1 dataset folder: names from ``entities_text.txt`` (``text``; ``auto`` when present)
    or MIDs from ``entities.txt`` (``mid``); ``split`` one split only (default: train and test);
    ``on_bad``: strict reading (see :class:`KGR1Source`)."""
    if entity_names not in ENTITY_NAMES:
        raise BadInput(f"entity names must be one of {', '.join(ENTITY_NAMES)}, got {entity_names!r}",
                       field="entity_names")
    text, mids = folder / "entities_text.txt", folder / "entities.txt"
    use_text = text.is_file() if entity_names == "auto" else entity_names == "text"
    entity_file = text if use_text else mids
    if not entity_file.is_file():
        raise BadInput(f"{entity_file} not found (KG-R1 layout, entity names {entity_names!r})",
                       field="path")
    splits = [split] if split else [s for s in SPLITS if split_file(folder, s).is_file()]
    missing = [s for s in splits if not split_file(folder, s).is_file()]
    if missing or not splits:
        raise BadInput(f"{folder} has no {split_file(folder, (missing or ['train'])[0]).name}", field="split")
    relations = read_vocab(folder / "relations.txt")
    return KGR1Source(folder, entity_file, read_vocab(entity_file), relations, splits, on_bad=on_bad)


def store_relation_vocab(store: GraphStore, dataset: str, relations: list[str]) -> None:
    """Record the dataset's relation vocabulary: KG-R1 says "relation not found" only for a relation
    outside it (one in it but not around the entity is "no results")."""
    store.run("kg_dataset_vocab", {"name": dataset, "relations": sorted(set(relations)),
                                   "generation": uuid.uuid4().hex})
