"""Schema-constrained replies: every model reply NeoRAG parses goes through :func:`ask`.

- **Mode per endpoint, probed once.** ``json_schema`` (the reply is constrained by the endpoint's grammar:
  llama.cpp, vLLM, Ollama, OpenAI), else ``json_object`` (any JSON; the schema is put in the prompt and
  checked here), else ``text`` (nothing constrained; the schema is in the prompt). With
  ``NEORAG_LLM_STRUCTURED_OUTPUT=auto`` one tiny probe request per endpoint (``PROBE_SYSTEM``) finds the
  first mode the endpoint accepts (an HTTP 400/404/422 refusal moves to the next); the answer is remembered
  for the life of the process. An endpoint that cannot be reached is not remembered: the call fails as usual.
- **Validated.** The reply is parsed (the first JSON value in it; a task may also read its older plain-text
  format through ``legacy``), optionally normalised (``prepare``), then validated by a pydantic model whose
  JSON schema is the one sent. A reply that fails is retried once, told what was wrong (with twice the
  tokens when it was cut off); a second failure returns ``value=None`` and is counted as skipped. Nothing
  here raises except ``LLMUnavailable`` for an endpoint failure, which callers already handle.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar

from pydantic import BaseModel, ValidationError

from app.core.errors import LLMRejected

if TYPE_CHECKING:
    from app.services.llm import LLMClient, Usage

log = logging.getLogger(__name__)
Mode = Literal["json_schema", "json_object", "text"]
MODES: tuple[Mode, ...] = ("json_schema", "json_object", "text")
PROBE_SYSTEM = "neorag structured-output probe"
_PROBE_SCHEMA = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"],
                 "additionalProperties": False}
M = TypeVar("M", bound=BaseModel)

_remembered: dict[str, Mode] = {}
_remember_lock = threading.Lock()


@dataclass
class Structured(Generic[M]):
    """The validated reply (None when skipped), the attempts it took, the mode and the last error."""

    value: M | None
    attempts: int
    mode: Mode
    error: str | None = None


def _endpoint_key(llm: LLMClient) -> str:
    return f"{llm.base_url}|{llm.model}"


def forget_modes() -> None:
    """Forget every probed endpoint (tests)."""
    with _remember_lock:
        _remembered.clear()


def response_format(mode: Mode, name: str, schema: dict[str, Any]) -> dict[str, Any] | None:
    """The ``response_format`` request field for ``mode`` (None for text)."""
    if mode == "json_schema":
        return {"type": "json_schema", "json_schema": {"name": name, "schema": schema, "strict": True}}
    if mode == "json_object":
        return {"type": "json_object"}
    return None


def endpoint_mode_known(llm: LLMClient) -> str | None:
    """The mode in use for this endpoint without probing it (None while not probed yet)."""
    if llm.structured_output in MODES:
        return llm.structured_output
    with _remember_lock:
        return _remembered.get(_endpoint_key(llm))


def endpoint_mode(llm: LLMClient) -> Mode:
    """The configured mode, or (auto) the one probed for this endpoint, probing it once."""
    configured = llm.structured_output
    if configured in MODES:
        return configured  # type: ignore[return-value]
    key = _endpoint_key(llm)
    with _remember_lock:
        if key in _remembered:
            return _remembered[key]
    mode = _probe(llm)
    with _remember_lock:
        _remembered.setdefault(key, mode)
        return _remembered[key]


def _probe(llm: LLMClient) -> Mode:
    messages = [{"role": "system", "content": PROBE_SYSTEM},
                {"role": "user", "content": 'Reply {"ok": true}'}]
    for mode in ("json_schema", "json_object"):
        try:
            llm.chat(messages, temperature=0.0, max_tokens=12,
                     response_format=response_format(mode, "probe", _PROBE_SCHEMA))  # type: ignore[arg-type]
            log.info("LLM endpoint %s accepts response_format %s", llm.shown_url, mode)
            return mode  # type: ignore[return-value]
        except LLMRejected as exc:
            log.warning("LLM endpoint %s refuses response_format %s (%s)", llm.shown_url, mode, exc.why)
    return "text"


def schema_of(model: type[BaseModel]) -> dict[str, Any]:
    """The model's JSON schema, ``$ref`` inlined, titles and descriptions dropped (for grammars)."""
    raw = model.model_json_schema()
    defs = raw.pop("$defs", {})

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            if "$ref" in node:
                return walk(defs[node["$ref"].rsplit("/", 1)[-1]])
            return {k: walk(v) for k, v in node.items() if k not in ("title", "description")}
        if isinstance(node, list):
            return [walk(v) for v in node]
        return node

    return walk(raw)  # type: ignore[no-any-return]


def first_json(text: str) -> Any:
    """The first JSON object or array in ``text`` (code fences allowed), or None."""
    body = text.strip()
    if body.startswith("```"):
        body = body.strip("`")
        body = body[body.find("\n") + 1:] if "\n" in body else body
    starts = [i for i in (body.find("{"), body.find("[")) if i >= 0]
    if not starts:
        return None
    try:
        value, _ = json.JSONDecoder().raw_decode(body[min(starts):])
    except json.JSONDecodeError:
        return None
    return value


def _with_format(messages: list[dict[str, str]], mode: Mode, schema: dict[str, Any]) -> list[dict[str, str]]:
    """Without a grammar the schema travels in the prompt (appended to the last user message)."""
    if mode == "json_schema":
        return messages
    hint = ("\n\nReply with one JSON value only, no prose, matching this JSON Schema:\n"
            + json.dumps(schema, separators=(",", ":")))
    last = dict(messages[-1])
    last["content"] = str(last.get("content", "")) + hint
    return [*messages[:-1], last]


def _validate(model: type[M], text: str, legacy: Callable[[str], Any] | None,
              prepare: Callable[[Any], Any] | None) -> tuple[M | None, str]:
    data = first_json(text)
    if data is None and legacy is not None:
        data = legacy(text)
    if data is None:
        return None, "no JSON in the reply"
    if prepare is not None:
        data = prepare(data)
    try:
        return model.model_validate(data), ""
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ())) or "reply"
        return None, f"{where}: {first.get('msg')}"


def ask(llm: LLMClient, messages: list[dict[str, str]], model: type[M], *, task: str, max_tokens: int,
        temperature: float | None = None, usage: Usage | None = None,
        legacy: Callable[[str], Any] | None = None,
        prepare: Callable[[Any], Any] | None = None) -> Structured[M]:
    """A validated reply of type ``model`` (see the module docstring); raises only ``LLMUnavailable``."""
    mode = endpoint_mode(llm)
    schema = schema_of(model)
    rf = response_format(mode, task, schema)
    convo = _with_format(messages, mode, schema)
    error = ""
    for attempt in (1, 2):
        reply = llm.chat(convo, temperature=temperature, max_tokens=max_tokens, usage=usage,
                         response_format=rf, free_text=False)
        value, error = _validate(model, reply.text, legacy, prepare)
        if value is not None:
            llm.structured_stats.record(mode, task, "first_try" if attempt == 1 else "after_retry")
            return Structured(value, attempt, mode)
        if reply.finish_reason == "length":
            error += " (the reply was cut off: keep it shorter)"
            max_tokens *= 2
        convo = [*convo, {"role": "assistant", "content": reply.text[:2000]},
                 {"role": "user", "content": f"That reply was invalid ({error}). Reply again, JSON only."}]
    llm.structured_stats.record(mode, task, "skipped")
    log.warning("LLM reply for %s skipped after a retry: %s", task, error)
    return Structured(None, 2, mode, error)
