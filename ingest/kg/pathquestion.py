"""PathQuestion (PQ-2H / PQ-3H) -> RoG records whose graph is the topic entity's k-hop neighbourhood.

Question lines: ``question \\t answer(alt1/alt2/) \\t h#r1#e1#r2#...#answer#<end>#answer``;
KB lines: ``subject \\t relation \\t object``. The neighbourhood is an undirected breadth-first
expansion of ``hops`` steps (default: the gold path's length) that does not expand *through*
hub entities of degree > ``max_degree`` (the topic entity is always expanded); the gold path's
triples are always included, as RoG subgraphs always hold the answer paths.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

from app.core.errors import BadInput
from ingest.kg.records import KGRecord, Triple

MAX_DEGREE = 100


def is_pathquestion_file(path: Path) -> bool:
    """Whether the first line looks like a PathQuestion question line."""
    try:
        with path.open(encoding="utf-8") as handle:
            first = handle.readline().rstrip("\n").split("\t")
    except (OSError, UnicodeDecodeError):
        return False
    return len(first) == 3 and "#" in first[2] and "(" in first[1]


def default_kb(questions: Path) -> Path:
    """``PQ-2H.txt`` -> ``2H-kb.txt`` beside it."""
    stem = questions.stem.split("-", 1)[-1]
    return questions.with_name(f"{stem}-kb.txt")


def read_kb(path: Path) -> list[Triple]:
    """The KB's triples (lines that are not three tab-separated fields are skipped)."""
    out: list[Triple] = []
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            parts = line.rstrip("\n").split("\t")
            if len(parts) == 3 and all(parts):
                out.append((parts[0], parts[1], parts[2]))
    return out


def parse_path(gold: str) -> list[Triple]:
    """``h#r1#e1#r2#a#<end>#a`` -> [(h, r1, e1), (e1, r2, a)]."""
    parts = gold.split("#<end>#")[0].split("#")
    return [(parts[i], parts[i + 1], parts[i + 2]) for i in range(0, len(parts) - 2, 2)]


def parse_answers(field: str) -> list[str]:
    """``main(alt1/alt2/)`` -> the alternatives (or the main answer)."""
    main, _, rest = field.partition("(")
    alts = [a for a in rest.rstrip(")").split("/") if a]
    return alts or [main]


def neighbourhood(adjacency: dict[str, list[Triple]], topic: str, hops: int,
                  max_degree: int = MAX_DEGREE) -> set[Triple]:
    """Triples within ``hops`` undirected steps of ``topic``, not expanding through hubs."""
    seen, frontier, triples = {topic}, [topic], set()
    for _ in range(hops):
        nxt: list[str] = []
        for node in frontier:
            edges = adjacency.get(node, [])
            if node != topic and len(edges) > max_degree:
                continue
            for triple in edges:
                triples.add(triple)
                for other in (triple[0], triple[2]):
                    if other not in seen:
                        seen.add(other)
                        nxt.append(other)
        frontier = nxt
    return triples


def read_pathquestion(questions: Path, kb: Path | None = None, hops: int | None = None,
                      max_degree: int = MAX_DEGREE) -> Iterator[KGRecord]:
    """One RoG record per question line; ids are ``<file stem>-<line index>``."""
    kb_path = kb or default_kb(questions)
    if not kb_path.exists():
        raise BadInput(f"PathQuestion KB {kb_path} not found; pass it with --kb", field="kb")
    adjacency: dict[str, list[Triple]] = defaultdict(list)
    for triple in read_kb(kb_path):
        adjacency[triple[0]].append(triple)
        adjacency[triple[2]].append(triple)
    with questions.open(encoding="utf-8") as handle:
        for index, line in enumerate(handle):
            parts = line.rstrip("\n").split("\t")
            if len(parts) != 3:
                continue
            question, answer_field, gold = parts
            path = parse_path(gold)
            if not path:
                continue
            topic = path[0][0]
            graph = neighbourhood(adjacency, topic, hops or len(path), max_degree) | set(path)
            answers = parse_answers(answer_field)
            yield KGRecord(
                sample_id=f"{questions.stem}-{index}", triples=sorted(graph), question=question,
                answers=answers, q_entity=[topic], a_entity=answers,
            )
