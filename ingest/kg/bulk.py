"""KG records -> the CSV input of Neo4j's ``neo4j-admin database import full`` (the bulk path).

Writes the graph the online loader (:mod:`ingest.kg.loader`) writes, in one pass over the records:
``KGEntity`` for every name in a triple, one ``KG_REL`` per distinct whole-graph triple (``samples``: how
many samples hold it), ``KGFacts`` buckets (:func:`app.kg.facts.encode_facts`), ``KGSample`` nodes, one
``KG_FACT`` per distinct sample triple when asked (``sample_edges``, as the loader) and the ``KG_TOPIC`` /
``KG_ANSWER`` links to entities of the graph. Samples are de-duplicated as the loader does (the first of an
id wins; a sample's repeated triples collapse). A sample that the import cannot take (a name too long for an
index key, a value larger than the tool's read buffer) is reported with where it was read and skipped.

Past ``parallel_after`` distinct triples, worker processes (:mod:`ingest.kg.bulk_facts`) sort and encode
the buckets, about half of the pass; this process keeps the rest and writes rows in reading order (entity
ids by first appearance): sorting cost it 3.2 s of CPU at 3M triples, and the importer was at most 0.6 s
faster on sorted files.

Every string is quoted (an unquoted empty field is null for the tool, a quoted one the empty string),
arrays are joined by U+001F; the array values a CSV field cannot carry (an empty list, ``[""]``, an
element holding U+001F) are returned as ``fixups`` for Cypher to set after the import.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import chain, islice
from operator import itemgetter
from pathlib import Path
from typing import IO, Any

from app.core.gc_freeze import frozen_heap
from app.kg.keys import entity_key, entity_lkey, facts_bucket_count, sample_key
from ingest.kg.bulk_facts import MAX_FIELD_CHARS, PART_GLOB, FactsPool, facts_lines, q
from ingest.kg.records import KGRecord, Triple

ARRAY_DELIMITER = "\x1f"
MAX_KEY_BYTES = 4_000  # indexed values (entity and sample keys): below Neo4j's range-index key limit
MAX_PROBLEMS = 100  # problems kept for the report (all are counted)
_HEAD_TAIL, _RELATION = itemgetter(0, 2), itemgetter(1)
PARALLEL_AFTER = 200_000  # distinct sample triples read in process before the workers start (small loads)

# file stem -> (kind, label or type, header)
FILES: dict[str, tuple[str, str, str]] = {
    "entities": ("nodes", "KGEntity", ":ID(E),key,lkey,name,dataset"),
    "samples": ("nodes", "KGSample", ":ID(S),key,dataset,sample_id,question,answers:string[],"
                "q_entity:string[],a_entity:string[],n_triples:long,relations:string[],facts_buckets:long,"
                "split"),
    "facts": ("nodes", "KGFacts", "key,sample,facts"),
    "rels": ("relationships", "KG_REL", ":START_ID(E),:END_ID(E),relation,samples:long"),
    "fact_edges": ("relationships", "KG_FACT", ":START_ID(E),:END_ID(E),relation,sample"),
    "topics": ("relationships", "KG_TOPIC", ":START_ID(S),:END_ID(E)"),
    "answers": ("relationships", "KG_ANSWER", ":START_ID(S),:END_ID(E)"),
}
ARRAYS = ("answers", "q_entity", "a_entity", "relations")


def _array(values: list[str]) -> str | None:
    """The CSV field of a string array, or None when CSV cannot carry it (see the module docstring)."""
    if not values or values == [""] or any(ARRAY_DELIMITER in v for v in values):
        return None
    return q(ARRAY_DELIMITER.join(values))


def _too_big(text: str, limit: int) -> bool:
    return len(text) > limit // 4 and len(text.encode("utf-8")) > limit


@dataclass
class BulkReport:
    """What the CSV pass read and wrote."""

    dataset: str
    samples_loaded: int = 0
    samples_skipped: int = 0  # a later sample with an id already seen
    samples_rejected: int = 0  # bad input: reported in ``problems`` and skipped
    triples: int = 0  # distinct triples per sample, summed (the loader's count)
    duplicates_collapsed: int = 0
    distinct_triples: int = 0  # whole-graph KG_REL edges
    entities: int = 0
    problems: list[tuple[str, str]] = field(default_factory=list)
    fixups: list[dict[str, Any]] = field(default_factory=list)  # kg_sample_upsert rows

    def reject(self, where: str, reason: str) -> None:
        """Count a skipped bad sample; keep the first ``MAX_PROBLEMS`` for the report."""
        self.samples_rejected += 1
        if len(self.problems) < MAX_PROBLEMS:
            self.problems.append((where, reason))


class BulkWriter:
    """Streams records into the CSV files of ``folder`` (:data:`FILES`); :meth:`finish` writes the
    whole-graph edges and links, which need every sample first."""

    def __init__(self, folder: Path, dataset: str, split: str | None = None,
                 sample_edges: bool = False, workers: int = 0, parallel_after: int | None = None) -> None:
        self.folder, self.dataset, self.split = folder, dataset, split
        self.sample_edges = sample_edges
        self.report = BulkReport(dataset)
        self.out: dict[str, IO[str]] = {}
        for stem, (_, _, header) in FILES.items():
            (folder / f"{stem}.header.csv").write_text(header + "\n", encoding="utf-8")
            self.out[stem] = open(folder / f"{stem}.csv", "w", encoding="utf-8", newline="")  # noqa: SIM115
        self.qdataset = q(dataset)
        self.ids: dict[str, str] = {}  # entity name -> import id, as written (formatted once)
        self.rel_q: dict[str, str] = {}  # relation -> quoted field
        self.counts: Counter[Triple] = Counter()
        self.links: list[tuple[int, list[str], list[str]]] = []  # (sample id, topics, answers)
        self.seen: set[str] = set()
        self.workers = workers
        self.parallel_after = PARALLEL_AFTER if parallel_after is None else parallel_after
        self.read_triples = 0  # distinct sample triples read so far (the workers start past parallel_after)
        self.pool: FactsPool | None = None
        self.in_flight: set[str] = set()  # sample ids with the workers

    def add(self, record: KGRecord) -> None:
        """Write one record (skipped when its id was seen; reported and skipped when bad). With workers,
        its buckets are encoded there and the record is committed when they answer, in reading order."""
        if record.sample_id in self.in_flight and self.pool is not None:
            self.pool.drain()  # a repeated id: the first one's verdict decides (as in process)
        if record.sample_id in self.seen:
            self.report.samples_skipped += 1
            return
        key = sample_key(self.dataset, record.sample_id)
        distinct = dict.fromkeys(record.triples)  # in order (reproducible files); the buckets sort a copy
        problem = self._problem(key, record)
        if problem is not None:
            self.report.reject(record.origin or record.sample_id, problem)
            return
        self.read_triples += len(distinct)
        if self.pool is None and self.workers > 0 and self.read_triples > self.parallel_after:
            self.pool = FactsPool(self.folder, self.workers, self._verdict)
        if self.pool is not None:
            self.in_flight.add(record.sample_id)
            self.seen.add(record.sample_id)
            self.pool.submit((record, key, distinct), (key, record.triples, record.extra))
            return
        _, problem, lines = facts_lines(key, distinct.keys(), record.extra)
        if problem is not None:
            self.report.reject(record.origin or record.sample_id, problem)
            return
        self.seen.add(record.sample_id)
        self.out["facts"].write(lines)
        self._commit(record, key, distinct)

    def _verdict(self, item: tuple[KGRecord, str, dict[Triple, None]], problem: str | None) -> None:
        """A worker's answer for one sample: commit it, or report it (its id is free again)."""
        record, key, distinct = item
        self.in_flight.discard(record.sample_id)
        if problem is None:
            self._commit(record, key, distinct)
        else:
            self.seen.discard(record.sample_id)
            self.report.reject(record.origin or record.sample_id, problem)

    def _commit(self, record: KGRecord, key: str, distinct: dict[Triple, None]) -> None:
        """Everything of an accepted sample but its buckets: entities, edges, counts, its row, its links."""
        report = self.report
        sid = report.samples_loaded
        report.samples_loaded += 1
        report.duplicates_collapsed += len(record.triples) - len(distinct)
        report.triples += len(distinct)
        qkey = q(key)
        relations = self._edges(qkey, distinct)
        self.counts.update(distinct.keys())  # the keys: a mapping would add its values
        n = len(distinct)
        self._sample(sid, key, qkey, record, n, sorted(relations), facts_bucket_count(n))
        self.links.append((sid, list(dict.fromkeys(record.q_entity)), list(dict.fromkeys(record.a_entity))))

    def write_all(self, records: Iterable[KGRecord]) -> BulkReport:
        """:meth:`add` every record, then :meth:`finish`; the files are closed (and the workers stopped)
        on a failure. The collector never walks what the writer keeps
        (:func:`app.core.gc_freeze.frozen_heap`)."""
        try:
            with frozen_heap() as heap:
                for record in records:
                    self.add(record)
                    heap.step()
                return self.finish()
        except BaseException:
            self.close()
            raise

    def _problem(self, key: str, record: KGRecord) -> str | None:
        """Why the import cannot take this sample, or None (a C-speed length scan; details only when
        some value is long)."""
        if _too_big(key, MAX_KEY_BYTES):
            return f"its id is longer than {MAX_KEY_BYTES} bytes"
        room = (MAX_KEY_BYTES - len(key)) // 4  # a name this long (4 bytes a char at most) fits a key
        if record.triples and max(map(len, chain.from_iterable(record.triples))) > room:
            for h, r, t in record.triples:
                for name in (h, t):
                    if _too_big(entity_key(self.dataset, name), MAX_KEY_BYTES):
                        return f"an entity name is longer than {MAX_KEY_BYTES} bytes ({name[:40]!r}...)"
                if _too_big(r, MAX_FIELD_CHARS):
                    return "a relation name is too long"
        values = [record.question, *record.answers, *record.q_entity, *record.a_entity]
        if any(_too_big(v, MAX_FIELD_CHARS) for v in values):
            return f"a question, answer or entity is longer than {MAX_FIELD_CHARS:,} characters"
        return None

    def _entities(self, names: Iterable[str]) -> None:
        """Give each of ``names`` (new, in order) the next import id and write its row."""
        ids, dataset, qdataset = self.ids, self.dataset, self.qdataset
        lines = []
        for name in names:
            eid = ids[name] = str(len(ids))
            lines.append(f"{eid},{q(entity_key(dataset, name))},{q(entity_lkey(dataset, name))},{q(name)},"
                         f"{qdataset}\n")
        self.out["entities"].write("".join(lines))

    def _edges(self, qkey: str, distinct: dict[Triple, None]) -> set[str]:
        """Ids for the sample's new entities (in order of first appearance, head before tail), quoted
        names for its new relations, its ``KG_FACT`` rows when asked; returns its relations."""
        ids, rel_q = self.ids, self.rel_q
        seen = dict.fromkeys(chain.from_iterable(map(_HEAD_TAIL, distinct)))  # C-speed, ordered
        self._entities([name for name in seen if name not in ids])
        relations = set(map(_RELATION, distinct))
        for rel in relations.difference(rel_q):
            rel_q[rel] = q(rel)
        if self.sample_edges:
            self.out["fact_edges"].write("".join([f"{ids[h]},{ids[t]},{rel_q[r]},{qkey}\n"
                                                  for h, r, t in distinct]))
        return relations

    def _sample(self, sid: int, key: str, qkey: str, record: KGRecord, n_triples: int, relations: list[str],
                buckets: int) -> None:
        arrays = {"answers": record.answers, "q_entity": record.q_entity, "a_entity": record.a_entity,
                  "relations": relations}
        fields = {name: _array(values) for name, values in arrays.items()}
        fix = {name: arrays[name] for name, value in fields.items() if value is None}
        if fix:
            self.report.fixups.append({"key": key, "props": fix})
        split = record.split or self.split
        self.out["samples"].write(
            f"{sid},{qkey},{self.qdataset},{q(record.sample_id)},{q(record.question)},"
            f"{fields['answers'] or ''},{fields['q_entity'] or ''},{fields['a_entity'] or ''},"
            f"{n_triples},{fields['relations'] or ''},{buckets},{q(split) if split else ''}\n")

    def finish(self) -> BulkReport:
        """Take the workers' last answers, write the whole-graph edges and the sample links, close the
        files; the report."""
        if self.pool is not None:
            self.pool.finish()
        ids, rel_q = self.ids, self.rel_q
        out = self.out["rels"]
        items = iter(self.counts.items())
        while chunk := list(islice(items, 50_000)):
            out.write("".join([f"{ids[h]},{ids[t]},{rel_q[r]},{n}\n" for (h, r, t), n in chunk]))
        for sid, topics, answers in self.links:
            for stem, names in (("topics", topics), ("answers", answers)):
                found = [ids[n] for n in names if n in ids]
                if found:
                    self.out[stem].write("".join(f"{sid},{eid}\n" for eid in found))
        for handle in self.out.values():
            handle.close()
        self.report.distinct_triples = len(self.counts)
        self.report.entities = len(ids)
        return self.report

    def close(self) -> None:
        """Stop the workers and close the files (after a failure; :meth:`finish` closes them too)."""
        if self.pool is not None:
            self.pool.terminate()
        for handle in self.out.values():
            handle.close()

    def tool_args(self) -> list[str]:
        """The import tool's file arguments (header file first). Fields may hold newlines (``facts``
        always does): multi-line parsing v1, about 30% slower than none; v2 (multi-line files named)
        fails on 5.26.30 once a file exceeds its 4 MiB read buffer ("found CR outside a text cell")."""
        args = []
        for stem, (kind, name, _) in FILES.items():
            files = [self.folder / f"{stem}.header.csv", self.folder / f"{stem}.csv"]
            if stem == "facts":  # the workers' rows too
                files += sorted(self.folder.glob(PART_GLOB))
            args.append(f"--{kind}={name}={','.join(map(str, files))}")
        return [*args, f"--array-delimiter=U+{ord(ARRAY_DELIMITER):04X}", "--id-type=integer",
                "--multiline-fields=true"]
