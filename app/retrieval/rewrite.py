"""Rewrite a follow-up question into a standalone one using the conversation (LLM, optional)."""

from __future__ import annotations

import logging
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from app.core.errors import LLMUnavailable
from app.retrieval.text import refers_back
from app.services.container import Services
from app.services.structured import ask

log = logging.getLogger(__name__)

PROMPT = (
    "Rewrite the user's last question as one standalone question that can be understood without the "
    "conversation, replacing pronouns with what they refer to. "
    'Reply with JSON only, the standalone question as the value of "question".'
)


class Rewrite(BaseModel):
    """The rewrite reply."""

    model_config = ConfigDict(extra="forbid")
    question: str = Field(min_length=3, max_length=4000)


def _first_line(reply: str) -> Any:
    text = reply.strip().strip('"').splitlines()[0].strip() if reply.strip() else ""
    return {"question": text} if text else None


def rewrite_question(
    services: Services, question: str, history: list[dict[str, str]], warnings: list[dict[str, str]]
) -> str:
    """The question to retrieve with: rewritten when it refers back and an LLM is configured."""
    if (
        services.llm is None
        or not history
        or not services.settings.query_rewrite_with_history
        or not refers_back(question)
    ):
        return question
    convo = "\n".join(f"{h['role']}: {h['content']}" for h in history[-6:])
    messages = [
        {"role": "system", "content": PROMPT},
        {"role": "user", "content": f"Conversation:\n{convo}\n\nLast question: {question}"},
    ]
    try:
        res = ask(services.llm, messages, Rewrite, task="query_rewrite", max_tokens=96, temperature=0.0,
                  legacy=_first_line)
    except LLMUnavailable as exc:
        warnings.append({"type": "rewrite_failed", "detail": f"question used as is: {exc}"})
        return question
    if res.value is None:
        detail = f"question used as is: invalid reply ({res.error})"
        warnings.append({"type": "rewrite_failed", "detail": detail})
        return question
    text = " ".join(res.value.question.split())
    return text if len(text) <= 2 * services.settings.query_max_question_chars else question
