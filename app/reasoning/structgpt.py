"""StructGPT over a knowledge graph: LLM relation choice, bidirectional hops, answer or continue, filter.

The loop follows CONTRACTS.md §4. The graph is reached only through :class:`KGView`, so the same logic runs
over NeoRAG's store (see ``app/reasoning/adapters.py``) or any in-memory graph.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from app.reasoning import structgpt_prompts as prompts
from app.reasoning.text import bm25_rank, squash
from app.services.llm import LLMClient, Usage
from app.services.structured import ask

Triple = tuple[str, str, str]
INVERSE = " (inverse)"
KEEP_COMMON = "common.topic.notable_types"
_FINAL = re.compile(r"final\s*answer\s*[:：]?\s*(.*)", re.IGNORECASE | re.DOTALL)


class KGView(Protocol):
    """The graph as the reasoner sees it (already scoped to one sample or one dataset graph)."""

    def resolve(self, entity: str) -> str | None:
        """The graph's name for ``entity`` (exact, then case-insensitive), or None."""

    def relations(self, entity: str) -> list[tuple[str, str]]:
        """(relation, direction) pairs touching ``entity``; direction 'out' (entity is head) or 'in'."""

    def triples(self, entity: str, relation: str, direction: str) -> list[Triple]:
        """(h, r, t) triples of ``relation`` with ``entity`` as head ('out') or tail ('in')."""


@dataclass
class StructGPTConfig:
    """Knobs of one run (defaults from CONTRACTS.md §4)."""

    max_depth: int = 3
    width: int = 5
    bidirectional: bool = True
    max_tokens_budget: int = 1024
    max_triples_per_relation: int = 50
    fallback_relations: int = 1
    workers: int = 4


@dataclass
class StructGPTResult:
    """Answer, supporting triples, per-entity steps and LLM accounting."""

    answer: str
    triples: list[Triple]
    steps: list[dict[str, Any]] = field(default_factory=list)
    llm_calls: int = 0
    usage: dict[str, int] = field(default_factory=dict)
    retrieved: list[Triple] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "answer": self.answer,
            "triples": [list(t) for t in self.triples],
            "steps": self.steps,
            "llm_calls": self.llm_calls,
            "usage": self.usage,
        }


def keep_relation(relation: str) -> bool:
    """Drop schema relations (``type.*``, ``common.*``) except ``common.topic.notable_types``."""
    if relation == KEEP_COMMON:
        return True
    return not (relation.startswith("type.") or relation.startswith("common."))


def label(relation: str, direction: str) -> str:
    """How a relation is shown to the LLM and in the response: ``r`` or ``r (inverse)``."""
    return relation if direction == "out" else relation + INVERSE


def serialise(triples: Sequence[Triple], budget_words: int) -> str:
    """``(h, r, t); (h, r, t)`` keeping whole triples while the word count stays within the budget."""
    out: list[str] = []
    words = 0
    for h, r, t in triples:
        text = f"({h}, {r}, {t})"
        n = len(text.split())
        if out and words + n > budget_words:
            break
        out.append(text)
        words += n
    return "; ".join(out)


def parse_choice(reply: str, offered: list[tuple[str, str]], width: int) -> list[tuple[str, str]]:
    """Offered (relation, direction) pairs named in ``reply``, in reply order, at most ``width``."""
    text = squash(reply)
    hits: list[tuple[int, tuple[str, str]]] = []
    taken: set[int] = set()
    # Longest labels first so "r (inverse)" wins over "r", and "a.b.c" over "a.b".
    for rel, direction in sorted(offered, key=lambda p: -len(label(*p))):
        needle = squash(label(rel, direction))
        for m in re.finditer(re.escape(needle), text):
            span = set(range(m.start(), m.end()))
            before = text[m.start() - 1] if m.start() > 0 else " "
            after = text[m.end()] if m.end() < len(text) else " "
            if span & taken or before.isalnum() or before in "._" or after.isalnum() or after in "._":
                continue
            taken |= span
            hits.append((m.start(), (rel, direction)))
            break
    chosen: list[tuple[str, str]] = []
    for _, pair in sorted(hits):
        if pair not in chosen:
            chosen.append(pair)
    return chosen[:width]


@lru_cache(maxsize=256)
def choice_model(labels: tuple[str, ...], width: int) -> type[BaseModel]:
    """The relation-choice reply: 1..width of the offered relation labels (an enum)."""
    label_enum = Literal.__getitem__(labels)  # type: ignore[attr-defined]

    class RelationChoice(BaseModel):
        model_config = ConfigDict(extra="forbid")
        relations: list[label_enum] = Field(min_length=1, max_length=width)  # type: ignore[valid-type]

    return RelationChoice


def parse_final(reply: str) -> str | None:
    """The answer after 'Final Answer:', or None when the model wants to continue."""
    m = _FINAL.search(reply)
    if not m:
        return None
    answer = m.group(1).strip().splitlines()[0].strip() if m.group(1).strip() else ""
    return answer.strip(" .\"'") or None


def parse_filtered(reply: str, triples: Sequence[Triple]) -> list[Triple]:
    """Retrieved triples the reply copies (order of the reply's lines is not needed)."""
    text = squash(reply)
    return [
        t
        for t in triples
        if squash(f"({t[0]}, {t[1]}, {t[2]})") in text or squash(f"{t[0]}, {t[1]}, {t[2]}") in text
    ]


class StructGPTReasoner:
    """One reasoner per request: holds the LLM, the graph view and the usage counter."""

    def __init__(self, llm: LLMClient, kg: KGView, config: StructGPTConfig | None = None) -> None:
        self.llm, self.kg, self.cfg = llm, kg, config or StructGPTConfig()
        self.usage = Usage()

    def _ask(self, prompt: str, max_tokens: int = 256) -> str:
        messages = [{"role": "system", "content": prompts.SYSTEM}, {"role": "user", "content": prompt}]
        return self.llm.chat(messages, temperature=0.0, max_tokens=max_tokens, usage=self.usage).text

    def _offered(self, entity: str, visited: set[tuple[str, str, str]]) -> list[tuple[str, str]]:
        pairs: list[tuple[str, str]] = []
        for rel, direction in self.kg.relations(entity):
            if direction == "in" and not self.cfg.bidirectional:
                continue
            if not keep_relation(rel) or (entity, rel, direction) in visited or (rel, direction) in pairs:
                continue
            pairs.append((rel, direction))
        return pairs

    def _choose(
        self, question: str, entity: str, offered: list[tuple[str, str]], history: list[str]
    ) -> tuple[list[tuple[str, str]], str]:
        """The relations to follow and who chose them: ``llm``, or ``bm25_fallback`` when the reply (and its
        one retry) named none of the offered relations."""
        labels = [label(r, d) for r, d in offered]
        by_label = dict(zip(labels, offered, strict=True))
        width = self.cfg.width

        def legacy(reply: str) -> Any:  # the original plain-text format: "rel; rel (inverse)"
            return {"relations": [label(*p) for p in parse_choice(reply, offered, width)]}

        ask_for = prompts.choose_relations(question, entity, labels, history, width)
        messages = [{"role": "system", "content": prompts.SYSTEM}, {"role": "user", "content": ask_for}]
        res = ask(self.llm, messages, choice_model(tuple(labels), width), task="structgpt_relations",
                  max_tokens=256, temperature=0.0, usage=self.usage, legacy=legacy)
        if res.value is not None:
            chosen = list(dict.fromkeys(by_label[x] for x in res.value.relations))  # type: ignore[attr-defined]
            return chosen[:width], "llm"
        # The reply named no offered relation: fall back to the BM25-ranked relations vs the question.
        ranked = bm25_rank(question, labels)
        return [offered[i] for i, _ in ranked[: max(1, self.cfg.fallback_relations)]], "bm25_fallback"

    def _fetch(self, entity: str, chosen: list[tuple[str, str]]) -> list[Triple]:
        def one(pair: tuple[str, str]) -> list[Triple]:
            return self.kg.triples(entity, pair[0], pair[1])[: self.cfg.max_triples_per_relation]

        with ThreadPoolExecutor(max_workers=max(1, min(self.cfg.workers, len(chosen)))) as pool:
            results = list(pool.map(one, chosen))
        return [t for batch in results for t in batch]

    def run(self, question: str, topic_entities: Sequence[str]) -> StructGPTResult:
        """Explore from the topic entities and answer ``question``."""
        frontier = [e for e in (self.kg.resolve(x) for x in topic_entities) if e]
        frontier = list(dict.fromkeys(frontier))[: self.cfg.width]
        visited: set[tuple[str, str, str]] = set()
        expanded: set[str] = set()
        retrieved: list[Triple] = []
        seen: set[Triple] = set()
        history: list[str] = []
        steps: list[dict[str, Any]] = []
        answer: str | None = None
        for _depth in range(self.cfg.max_depth):
            new_entities: list[str] = []
            for entity in frontier:
                expanded.add(entity)
                offered = self._offered(entity, visited)
                if not offered:
                    continue
                chosen, chooser = self._choose(question, entity, offered, history)
                visited.update((entity, r, d) for r, d in chosen)
                found = [t for t in self._fetch(entity, chosen) if t not in seen]
                seen.update(found)
                retrieved.extend(found)
                history.extend(f"{entity} -> {label(r, d)}" for r, d in chosen)
                steps.append(
                    {
                        "entity": entity,
                        "relations_offered": [label(r, d) for r, d in offered],
                        "relations_chosen": [label(r, d) for r, d in chosen],
                        "chosen_by": chooser,
                        "triples": [list(t) for t in found],
                    }
                )
                for h, _r, t in found:
                    other = t if h == entity else h
                    if other not in expanded and other not in new_entities:
                        new_entities.append(other)
            if not retrieved:
                break
            reply = self._ask(
                prompts.answer_or_continue(question, serialise(retrieved, self.cfg.max_tokens_budget))
            )
            answer = parse_final(reply)
            if answer is not None:
                break
            frontier = new_entities[: self.cfg.width]
            if not frontier:
                break
        if answer is None:
            reply = self._ask(
                prompts.final_answer(question, serialise(retrieved, self.cfg.max_tokens_budget))
            )
            answer = parse_final(reply) or reply.strip().splitlines()[0].strip() if reply.strip() else ""
        kept = self._filter(question, answer, retrieved)
        return StructGPTResult(
            answer=answer,
            triples=kept,
            steps=steps,
            llm_calls=self.usage.calls,
            usage=self.usage.as_dict(),
            retrieved=retrieved,
        )

    def _filter(self, question: str, answer: str, retrieved: list[Triple]) -> list[Triple]:
        """Final LLM pass: keep the triples supporting the answer (answer-matching ones if none parse)."""
        if not retrieved:
            return []
        reply = self._ask(
            prompts.filter_triples(question, answer, serialise(retrieved, self.cfg.max_tokens_budget)),
            max_tokens=512,
        )
        kept = parse_filtered(reply, retrieved)
        if kept:
            return kept
        names = {squash(a) for a in re.split(r",|;|\n", answer) if a.strip()}
        matching = [t for t in retrieved if squash(t[0]) in names or squash(t[2]) in names]
        return matching or list(retrieved)
