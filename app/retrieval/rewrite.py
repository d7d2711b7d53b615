"""Rewrite a follow-up question into a standalone one using the conversation (LLM, optional)."""

from __future__ import annotations

import logging

from app.core.errors import LLMUnavailable
from app.retrieval.text import refers_back
from app.services.container import Services

log = logging.getLogger(__name__)

PROMPT = (
    "Rewrite the user's last question as one standalone question that can be understood without the "
    "conversation, replacing pronouns with what they refer to. Reply with the question only."
)


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
    try:
        text = services.llm.chat(
            [
                {"role": "system", "content": PROMPT},
                {"role": "user", "content": f"Conversation:\n{convo}\n\nLast question: {question}"},
            ],
            temperature=0.0,
            max_tokens=96,
        ).text
    except LLMUnavailable as exc:
        warnings.append({"type": "rewrite_failed", "detail": f"question used as is: {exc}"})
        return question
    text = text.strip().strip('"').splitlines()[0].strip() if text.strip() else ""
    return text if 3 <= len(text) <= 2 * services.settings.query_max_question_chars else question
