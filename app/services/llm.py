"""One small LLM client over the ``openai`` package (any OpenAI-compatible endpoint)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, cast

from app.core.config import Settings
from app.core.errors import LLMRejected, LLMUnavailable
from app.core.redact import redact_url, remember, scrub
from app.services.structured_stats import StructuredStats

NO_LLM_HINT = ("set NEORAG_LLM_BASE_URL (e.g. http://127.0.0.1:8000/v1 for vLLM, "
               "http://127.0.0.1:11434/v1 for Ollama)")


@dataclass
class Usage:
    """Token usage, summed over calls."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    calls: int = 0

    def add(self, usage: Any) -> None:
        self.calls += 1
        if usage is not None:
            self.prompt_tokens += int(getattr(usage, "prompt_tokens", 0) or 0)
            self.completion_tokens += int(getattr(usage, "completion_tokens", 0) or 0)

    def as_dict(self) -> dict[str, int]:
        return {"prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens,
                "total_tokens": self.prompt_tokens + self.completion_tokens, "calls": self.calls}


@dataclass
class ChatResult:
    """One completion: text, usage and (when the endpoint returns them) token logprobs."""

    text: str
    usage: dict[str, int] = field(default_factory=dict)
    logprobs: list[float] | None = None
    finish_reason: str | None = None


@dataclass
class Throughput:
    """Tokens/s the endpoint reported (llama.cpp's ``timings``), as a running mean over recent replies."""

    prompt_per_s: float | None = None
    generation_per_s: float | None = None
    replies: int = 0

    def add(self, timings: Any) -> None:
        if not isinstance(timings, dict):
            return
        self.replies += 1
        pairs = (("prompt_per_s", "prompt_per_second"), ("generation_per_s", "predicted_per_second"))
        for attr, key in pairs:
            value = timings.get(key)
            if isinstance(value, int | float) and value > 0:
                old = getattr(self, attr)
                setattr(self, attr, float(value) if old is None else 0.8 * old + 0.2 * float(value))

    def as_dict(self) -> dict[str, Any]:
        def r(x: float | None) -> float | None:
            return None if x is None else round(x, 1)

        return {"prompt_tokens_per_s": r(self.prompt_per_s),
                "generation_tokens_per_s": r(self.generation_per_s), "replies": self.replies}


class LLMClient:
    """Chat completions with timeouts, retries and token counting."""

    def __init__(self, base_url: str, api_key: str, model: str, timeout_s: float = 60.0,
                 max_retries: int = 1, temperature: float = 0.0, max_tokens_cap: int = 0,
                 structured_output: str = "auto") -> None:
        from openai import OpenAI

        self.model, self.temperature, self.base_url = model, temperature, base_url
        remember(base_url)  # its credentials never reach a log record
        self._client = OpenAI(base_url=base_url, api_key=api_key or "not-needed", timeout=timeout_s,
                              max_retries=max_retries)
        self.usage = Usage()
        self.throughput = Throughput()
        self.max_tokens_cap = max_tokens_cap
        self.structured_output = structured_output  # auto | json_schema | json_object | text: structured.py
        self.structured_stats = StructuredStats()
        self._lock = threading.Lock()

    @classmethod
    def from_settings(cls, settings: Settings) -> LLMClient | None:
        """A client when an endpoint is configured, else None."""
        if not settings.llm_base_url:
            return None
        return cls.for_endpoint(settings, settings.llm_base_url, settings.llm_model)

    @classmethod
    def for_endpoint(cls, settings: Settings, base_url: str, model: str) -> LLMClient:
        """A client for ``base_url`` with every other knob from the settings."""
        return cls(base_url, settings.llm_api_key, model, settings.llm_timeout_s, settings.llm_max_retries,
                   settings.llm_temperature, settings.llm_max_tokens, settings.llm_structured_output)

    def rebind(self, base_url: str) -> None:
        """Point this client at another URL of the same endpoint (a restarted local server)."""
        self.base_url = base_url
        remember(base_url)
        self._client = self._client.with_options(base_url=base_url)

    @property
    def shown_url(self) -> str:
        """The endpoint as it may be shown: user info and key-like query parameters masked."""
        return redact_url(self.base_url) or ""

    def _failure(self, exc: Exception) -> str:
        """The exception as a one-line reason, with the endpoint's credentials masked."""
        return scrub(f"{type(exc).__name__}: {exc}", self.base_url)

    def capped(self, max_tokens: int | None) -> int | None:
        """``max_tokens`` within NEORAG_LLM_MAX_TOKENS (when set; free-text replies only)."""
        if self.max_tokens_cap <= 0:
            return max_tokens
        return min(max_tokens, self.max_tokens_cap) if max_tokens else self.max_tokens_cap

    def chat(self, messages: list[dict[str, str]], temperature: float | None = None,
             max_tokens: int | None = None, logprobs: bool = False, usage: Usage | None = None,
             response_format: dict[str, Any] | None = None, free_text: bool = True) -> ChatResult:
        """One non-streaming completion; raises LLMUnavailable on any endpoint failure (LLMRejected when the
        endpoint refused the request itself: HTTP 400/404/422, e.g. an unsupported ``response_format``).
        ``free_text=False`` (schema-bound replies, structured.py) is exempt from NEORAG_LLM_MAX_TOKENS."""
        kwargs: dict[str, Any] = {"model": self.model, "messages": messages,
                                  "temperature": self.temperature if temperature is None else temperature}
        if free_text:
            max_tokens = self.capped(max_tokens)
        if max_tokens:
            kwargs["max_tokens"] = max_tokens
        if logprobs:
            kwargs["logprobs"] = True
        if response_format is not None:
            kwargs["response_format"] = response_format
        try:
            resp = self._client.chat.completions.create(**kwargs)
        except Exception as exc:  # noqa: BLE001 - every endpoint failure is one kind for callers
            status = getattr(exc, "status_code", None)
            kind = LLMRejected if status in (400, 404, 422) else LLMUnavailable
            raise kind("the LLM endpoint failed", self._failure(exc),
                       f"check {self.shown_url} and NEORAG_LLM_MODEL") from exc
        with self._lock:
            self.usage.add(resp.usage)
            self.throughput.add((resp.model_extra or {}).get("timings"))
        if usage is not None:
            usage.add(resp.usage)
        choice = resp.choices[0] if resp.choices else None
        text = (choice.message.content or "") if choice and choice.message else ""
        lps = None
        if choice is not None and getattr(choice, "logprobs", None) and choice.logprobs.content:
            lps = [float(t.logprob) for t in choice.logprobs.content]
        return ChatResult(text=text, usage=Usage().as_dict() if resp.usage is None else {
            "prompt_tokens": resp.usage.prompt_tokens or 0,
            "completion_tokens": resp.usage.completion_tokens or 0,
        }, logprobs=lps, finish_reason=getattr(choice, "finish_reason", None))

    def stream(self, messages: list[dict[str, str]], temperature: float | None = None,
               max_tokens: int | None = None) -> Iterator[str]:
        """Yield text deltas of a streaming completion; raises LLMUnavailable on failure."""
        extra: dict[str, Any] = {}
        max_tokens = self.capped(max_tokens)
        if max_tokens:
            extra["max_tokens"] = max_tokens
        try:
            resp: Any = self._client.chat.completions.create(
                model=self.model, messages=cast(Any, messages), stream=True,
                temperature=self.temperature if temperature is None else temperature, **extra)
            with self._lock:
                self.usage.calls += 1
            for event in resp:
                if event.choices and event.choices[0].delta and event.choices[0].delta.content:
                    yield event.choices[0].delta.content
        except Exception as exc:  # noqa: BLE001
            raise LLMUnavailable("the LLM endpoint failed while streaming", self._failure(exc),
                                 f"check {self.shown_url}") from exc


def require_llm(client: LLMClient | None) -> LLMClient:
    """The client, or LLMUnavailable with a hint (routers map it to 503)."""
    if client is None:
        raise LLMUnavailable("this endpoint needs an LLM and none is configured", fix=NO_LLM_HINT)
    return client
