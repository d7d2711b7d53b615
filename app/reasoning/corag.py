"""CoRAG chain-of-retrieval agent: sub-query -> retrieve -> sub-answer chains, decoded greedily, best-of-n or
by tree search, then a final answer (defaults from CONTRACTS.md §2).

Path scoring follows CoRAG: a path is better when the model finds it *less* likely that the chain contains
"No relevant information found". CoRAG reads that log-likelihood from vLLM's ``prompt_logprobs``; over a plain
OpenAI-compatible endpoint we use a documented stand-in (see :func:`no_info_loglik`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from copy import deepcopy
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from app.reasoning import corag_prompts as prompts
from app.services.llm import LLMClient, Usage
from app.services.structured import ask

Decode = Literal["greedy", "best_of_n", "tree_search"]
_PREFIX = re.compile(
    r"^\s*(sub\s*-?query|intermediate query(\s*\d+)?|follow[- ]up( question)?|query|question)"
    r"\s*\d*\s*[:：]\s*",
    re.IGNORECASE,
)
_ANSWER_PREFIX = re.compile(
    r"^\s*(sub\s*-?answer|final answer|answer|intermediate answer(\s*\d+)?)\s*[:：]\s*", re.IGNORECASE
)
_NO_LOGPROBS_CONFIDENT = math.log(1e-6)


class Retriever(Protocol):
    """Passage retrieval: ``(query, k) -> [{id, contents, title?, score?}]``, best first."""

    def __call__(self, query: str, k: int) -> list[dict[str, Any]]: ...


@dataclass
class CoRAGConfig:
    """Agent knobs; the defaults are CoRAG's."""

    max_path_length: int = 3
    decode_strategy: Decode = "greedy"
    best_n: int = 4
    temperature: float = 0.7
    top_k: int = 5
    num_contexts: int = 20  # passages of the main question shown to the final answer (0 = none)
    expand_size: int = 4
    num_rollouts: int = 2
    beam_size: int = 1
    max_resample: int = 3
    task_desc: str = prompts.DEFAULT_TASK


@dataclass
class RagPath:
    """One chain: sub-queries, their sub-answers and the passages each retrieved."""

    subqueries: list[str] = field(default_factory=list)
    subanswers: list[str] = field(default_factory=list)
    passages: list[list[dict[str, Any]]] = field(default_factory=list)

    def steps(self) -> list[dict[str, Any]]:
        return [
            {"subquery": q, "subanswer": a, "doc_ids": [str(p.get("id", "")) for p in docs]}
            for q, a, docs in zip(self.subqueries, self.subanswers, self.passages, strict=True)
        ]


@dataclass
class CoRAGResult:
    """The final answer, the chosen chain and LLM accounting."""

    answer: str
    path: RagPath
    llm_calls: int
    usage: dict[str, int]
    path_score: float | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "answer": self.answer,
            "steps": self.path.steps(),
            "llm_calls": self.llm_calls,
            "usage": self.usage,
            "path_score": self.path_score,
        }


def clean_subquery(reply: str) -> str:
    """First non-empty line of the reply without 'SubQuery:'-style prefixes or quotes."""
    for line in reply.strip().splitlines():
        line = _PREFIX.sub("", line.strip().strip("\"'`")).strip().strip("\"'`").strip()
        if line:
            return line
    return ""


class SubQuery(BaseModel):
    """The sub-query reply: ``{"subquery": "<one simple question>"}``."""

    model_config = ConfigDict(extra="forbid")
    subquery: str = Field(min_length=1, max_length=300)


def _legacy_subquery(reply: str) -> Any:
    sub = clean_subquery(reply)
    return {"subquery": sub} if sub else None


def clean_answer(reply: str) -> str:
    """The reply without 'Final Answer:'-style prefixes, whitespace collapsed."""
    return " ".join(_ANSWER_PREFIX.sub("", reply.strip()).split())


def no_info_loglik(reply: str, logprobs: list[float] | None) -> float:
    """Stand-in for CoRAG's log P("No relevant information found" | path).

    The model answers the path's own Q/A pairs at temperature 0 with token logprobs. When it replies
    "No relevant information found", the mean token logprob of that reply is the estimate. When it gives an
    answer with mean token probability c, the no-information probability is at most 1 - c, so log(1 - c).
    Without logprobs the reply is taken as certain: 0.0 for no information, log(1e-6) for an answer.
    Lower is better (CoRAG keeps the path least likely to contain no information).
    """
    says_none = prompts.NO_INFO.lower() in reply.lower()
    if not logprobs:
        return 0.0 if says_none else _NO_LOGPROBS_CONFIDENT
    mean = sum(logprobs) / len(logprobs)
    if says_none:
        return mean
    return math.log(max(1.0 - math.exp(mean), 1e-6))


class CoRAGAgent:
    """One agent per request (its usage counter and sub-answer cache are per request)."""

    def __init__(
        self,
        llm: LLMClient,
        retriever: Retriever | Callable[[str, int], list[dict[str, Any]]],
        config: CoRAGConfig | None = None,
    ) -> None:
        self.llm, self.retriever, self.cfg = llm, retriever, config or CoRAGConfig()
        self.usage = Usage()
        self._answers: dict[str, tuple[str, list[dict[str, Any]]]] = {}

    def _chat(self, prompt: str, temperature: float, max_tokens: int = 128, logprobs: bool = False) -> Any:
        return self.llm.chat(
            [{"role": "user", "content": prompt}],
            temperature=temperature,
            max_tokens=max_tokens,
            logprobs=logprobs,
            usage=self.usage,
        )

    # -- one step ---------------------------------------------------------------------------------------
    def next_subquery(
        self, question: str, path: RagPath, temperature: float, avoid: tuple[str, ...] = ()
    ) -> str | None:
        """A new sub-query; a repeated, avoided or empty one is re-sampled at the sampling temperature."""
        seen = {q.lower() for q in (*path.subqueries, *avoid)}
        temp = temperature
        for _ in range(1 + self.cfg.max_resample):
            res = ask(
                self.llm,
                [{"role": "user", "content": prompts.subquery(
                    question, path.subqueries, path.subanswers, self.cfg.task_desc)}],
                SubQuery,
                task="corag_subquery",
                max_tokens=128,
                temperature=temp,
                usage=self.usage,
                legacy=_legacy_subquery,
            )
            sub = clean_subquery(res.value.subquery) if res.value is not None else ""
            if sub and sub.lower() not in seen:
                return sub
            temp = self.cfg.temperature
        return None

    def subanswer(self, subquery: str) -> tuple[str, list[dict[str, Any]]]:
        """Retrieve for the sub-query and answer it at temperature 0 (cached per request)."""
        key = subquery.lower()
        if key not in self._answers:
            docs = self.retriever(subquery, self.cfg.top_k)
            texts = [_doc_text(d) for d in docs]
            answer = clean_answer(self._chat(prompts.subanswer(subquery, texts), 0.0).text) or prompts.NO_INFO
            self._answers[key] = (answer, docs)
        return self._answers[key]

    def extend(self, question: str, path: RagPath, temperature: float, steps: int) -> RagPath:
        """Grow ``path`` by up to ``steps`` sub-queries (stops early when no new sub-query comes)."""
        for _ in range(steps):
            sub = self.next_subquery(question, path, temperature)
            if sub is None:
                break
            answer, docs = self.subanswer(sub)
            path.subqueries.append(sub)
            path.subanswers.append(answer)
            path.passages.append(docs)
        return path

    def score(self, question: str, path: RagPath) -> float:
        """CoRAG's path score stand-in (lower is better; see :func:`no_info_loglik`)."""
        docs = [f"Q: {q}\nA: {a}" for q, a in zip(path.subqueries, path.subanswers, strict=True)]
        res = self._chat(prompts.subanswer(question, docs), 0.0, max_tokens=16, logprobs=True)
        return no_info_loglik(res.text, res.logprobs)

    # -- decoding ---------------------------------------------------------------------------------------
    def greedy(self, question: str) -> tuple[RagPath, float | None]:
        return self.extend(question, RagPath(), 0.0, self.cfg.max_path_length), None

    def best_of_n(self, question: str) -> tuple[RagPath, float | None]:
        """n paths (the first greedy, the rest sampled); keep the one scored best."""
        paths = [
            self.extend(
                question, RagPath(), 0.0 if i == 0 else self.cfg.temperature, self.cfg.max_path_length
            )
            for i in range(max(1, self.cfg.best_n))
        ]
        scores = [self.score(question, p) for p in paths]
        best = min(range(len(paths)), key=lambda i: (scores[i], i))
        return paths[best], scores[best]

    def tree_search(self, question: str) -> tuple[RagPath, float | None]:
        """Expand each beam by sampled sub-queries, score children by rollouts, keep the best beams."""
        beams = [RagPath()]
        best_score: float | None = None
        for _depth in range(self.cfg.max_path_length):
            children: list[RagPath] = []
            for beam in beams:
                subs: list[str] = []
                for _ in range(self.cfg.expand_size):
                    temp = 0.0 if not subs and not children else self.cfg.temperature
                    sub = self.next_subquery(question, beam, temp, avoid=tuple(subs))
                    if sub is None:
                        break
                    subs.append(sub)
                for sub in subs:
                    child = deepcopy(beam)
                    answer, docs = self.subanswer(sub)
                    child.subqueries.append(sub)
                    child.subanswers.append(answer)
                    child.passages.append(docs)
                    children.append(child)
            if not children:
                break
            if len(children) > self.cfg.beam_size:
                scored = []
                for i, child in enumerate(children):
                    remaining = self.cfg.max_path_length - len(child.subqueries)
                    total = 0.0
                    for _ in range(max(1, self.cfg.num_rollouts)):
                        rollout = self.extend(question, deepcopy(child), self.cfg.temperature, remaining)
                        total += self.score(question, rollout)
                    scored.append((total / max(1, self.cfg.num_rollouts), i))
                scored.sort()
                best_score = scored[0][0]
                beams = [children[i] for _, i in scored[: self.cfg.beam_size]]
            else:
                beams = children
        return beams[0], best_score

    def run(self, question: str) -> CoRAGResult:
        """Decode a chain with the configured strategy, then answer from it (temperature 0)."""
        decode = {"greedy": self.greedy, "best_of_n": self.best_of_n, "tree_search": self.tree_search}
        path, path_score = decode[self.cfg.decode_strategy](question)
        found = self.retriever(question, self.cfg.num_contexts) if self.cfg.num_contexts > 0 else []
        docs = [_doc_text(d) for d in found]
        reply = self._chat(
            prompts.final(question, path.subqueries, path.subanswers, self.cfg.task_desc, docs),
            0.0,
            max_tokens=128,
        ).text
        return CoRAGResult(
            answer=clean_answer(reply),
            path=path,
            llm_calls=self.usage.calls,
            usage=self.usage.as_dict(),
            path_score=path_score,
        )


def _doc_text(doc: dict[str, Any]) -> str:
    text = str(doc.get("contents") or doc.get("content") or doc.get("text") or "")
    title = str(doc.get("title") or "")
    return f"{title}\n{text}" if title and not text.startswith(title) else text
