"""Entity extraction by the LLM (JSON), used when ``ingest_entity_mode = llm``."""

from __future__ import annotations

from app.core.errors import LLMUnavailable
from app.services.llm import LLMClient
from ingest.entities import ENTITY_PROMPT, parse_llm_entities


def extract_llm(llm: LLMClient, text: str, truncate: int = 2000) -> list[str] | None:
    """Surface forms named by the LLM; malformed JSON is retried once; None on failure (caller falls back)."""
    messages = [{"role": "user", "content": ENTITY_PROMPT + text[:truncate]}]
    for _ in range(2):
        try:
            reply = llm.chat(messages, max_tokens=400).text
        except LLMUnavailable:
            return None
        surfaces = parse_llm_entities(reply)
        if surfaces is not None:
            return [s for s in surfaces if s.strip() and s.strip() in text] or surfaces
    return None
