"""CONVINSE's intent-explicit structured representation (SR) of a conversational question, by the LLM.

CONVINSE rewrites a follow-up question into four slots before evidence retrieval: the context entity (from
the conversation), the question entity, the relation asked about and the expected answer type. NeoRAG asks
the LLM for exactly these slots under a JSON schema; the SR query is the non-empty slots joined by spaces
(what BM25 scores evidences against). Used by ``POST /evidence`` when a ``history`` is given and no
``structured_representation``.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from app.services.llm import LLMClient
from app.services.structured import ask

PROMPT = (
    "Rewrite the last question of a conversation as CONVINSE's structured representation: the context entity "
    "the conversation is about, the entity the question asks about, the relation asked for, and the type of "
    "the expected answer. Use words from the conversation; leave a slot empty when it does not apply. "
    'Answer with JSON only, an object with the keys "context_entity", "question_entity", "relation" and '
    '"answer_type".'
)
SLOTS = ("context_entity", "question_entity", "relation", "answer_type")


class StructuredRepresentation(BaseModel):
    """The four SR slots."""

    model_config = ConfigDict(extra="forbid")
    context_entity: str = Field(max_length=200)
    question_entity: str = Field(max_length=200)
    relation: str = Field(max_length=200)
    answer_type: str = Field(max_length=100)

    def query(self) -> str:
        """The slots joined, empty ones left out."""
        return " ".join(" ".join(getattr(self, s).split()) for s in SLOTS if getattr(self, s).strip())


def structured_representation(llm: LLMClient, question: str,
                              history: list[dict[str, str]]) -> tuple[StructuredRepresentation | None, str]:
    """(SR, "") or (None, why) when the reply was invalid twice. Raises LLMUnavailable on endpoint failure."""
    convo = "\n".join(f"{h['role']}: {h['content']}" for h in history[-6:])
    messages = [{"role": "system", "content": PROMPT},
                {"role": "user", "content": f"Conversation:\n{convo}\n\nLast question: {question}"}]
    res = ask(llm, messages, StructuredRepresentation, task="convinse_sr", max_tokens=160, temperature=0.0)
    if res.value is None or not res.value.query():  # type: ignore[attr-defined]
        return None, res.error or "every slot empty"
    return res.value, ""  # type: ignore[return-value]
