"""Structured replies against the scripted endpoint: mode probe and memory, json_object / text fallbacks,
retry then skip (counted), cut-off replies, and the helpers that keep answers' citations valid."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict, Field

from app.core.errors import LLMUnavailable
from app.retrieval.citations import Attributor, filter_stream, keep_valid
from app.services.llm import LLMClient
from app.services.structured import ask, endpoint_mode, first_json, forget_modes, schema_of
from tests.support.fake_openai import ScriptedOpenAI


class Pick(BaseModel):
    model_config = ConfigDict(extra="forbid")
    colour: str = Field(min_length=1, max_length=10)


@pytest.fixture(autouse=True)
def _fresh_modes() -> Iterator[None]:
    forget_modes()
    yield
    forget_modes()


def _client(llm: ScriptedOpenAI, mode: str = "auto") -> LLMClient:
    return LLMClient(llm.base_url, "k", "scripted", timeout_s=5, max_retries=0, structured_output=mode)


def _ask(client: LLMClient) -> Any:
    return ask(client, [{"role": "user", "content": "Pick a colour."}], Pick, task="pick", max_tokens=20)


def test_json_schema_is_probed_once_per_endpoint_and_sent_with_the_schema() -> None:
    with ScriptedOpenAI(['{"colour": "red"}', '{"colour": "blue"}', '{"colour": "gold"}']) as llm:
        client = _client(llm)
        assert _ask(client).value.colour == "red"
        assert _ask(client).value.colour == "blue"
        assert _ask(_client(llm)).attempts == 1  # another client of the same endpoint: no second probe
    assert len(llm.probes) == 1
    sent = llm.requests[0]["response_format"]
    assert sent["type"] == "json_schema" and sent["json_schema"]["schema"] == schema_of(Pick)
    assert sent["json_schema"]["schema"]["properties"]["colour"]["maxLength"] == 10
    assert "JSON Schema" not in llm.requests[0]["messages"][-1]["content"]  # the grammar carries it
    assert client.structured_stats.get("json_schema", "pick").first_try == 2


def test_endpoint_without_json_schema_gets_json_object_and_the_schema_in_the_prompt() -> None:
    with ScriptedOpenAI(['{"colour": "green"}'], response_formats=("json_object",)) as llm:
        client = _client(llm)
        res = _ask(client)
    assert res.value.colour == "green" and res.mode == "json_object"
    assert [p["response_format"]["type"] for p in llm.refused] == ["json_schema"]  # the probe's first try
    body = llm.requests[0]
    assert body["response_format"] == {"type": "json_object"}
    assert json.dumps(schema_of(Pick), separators=(",", ":")) in body["messages"][-1]["content"]


def test_endpoint_without_response_format_gets_text_mode() -> None:
    with ScriptedOpenAI(['Sure! {"colour": "teal"} is my pick.'], response_formats=()) as llm:
        res = _ask(_client(llm))
    assert res.value.colour == "teal" and res.mode == "text"
    assert "response_format" not in llm.requests[0]


def test_invalid_reply_is_retried_once_with_the_error_then_skipped_and_counted() -> None:
    with ScriptedOpenAI(["no json", '{"colour": "a much too long colour"}', '{"colour": "red"}']) as llm:
        client = _client(llm, "json_schema")
        skipped = _ask(client)
        ok = _ask(client)
    assert skipped.value is None and skipped.attempts == 2 and "colour" in (skipped.error or "")
    retry = llm.requests[1]["messages"]
    assert retry[-2] == {"role": "assistant", "content": "no json"} and "invalid" in retry[-1]["content"]
    assert ok.value.colour == "red" and not llm.probes  # configured mode: no probe
    stats = client.structured_stats
    assert stats.get("json_schema", "pick").skipped == 1 and stats.get("json_schema", "pick").first_try == 1
    assert stats.as_dict()["json_schema"]["pick"]["valid_first_try_share"] == 0.5


def test_cut_off_reply_is_retried_with_twice_the_tokens() -> None:
    cut = {"content": '{"colour": "re', "finish_reason": "length"}
    with ScriptedOpenAI([cut, '{"colour": "red"}']) as llm:
        res = _ask(_client(llm, "json_schema"))
    assert res.value.colour == "red" and res.attempts == 2
    assert [r["max_tokens"] for r in llm.requests] == [20, 40]
    assert "cut off" in llm.requests[1]["messages"][-1]["content"]


def test_endpoint_failure_is_not_remembered_and_raises() -> None:
    with ScriptedOpenAI([], default={"status": 500}) as llm:
        client = _client(llm, "json_schema")
        with pytest.raises(LLMUnavailable):
            _ask(client)
    dead = LLMClient("http://127.0.0.1:9/v1", "k", "m", timeout_s=1, max_retries=0)
    with pytest.raises(LLMUnavailable):
        endpoint_mode(dead)  # the probe could not reach it: nothing remembered
    with pytest.raises(LLMUnavailable):
        endpoint_mode(dead)


def test_max_tokens_cap_applies_to_free_text_only() -> None:
    with ScriptedOpenAI(['{"colour": "red"}', "hello", "hi"]) as llm:
        client = LLMClient(llm.base_url, "k", "m", max_retries=0, max_tokens_cap=8, structured_output="text")
        _ask(client)  # schema-bound: its own 20
        client.chat([{"role": "user", "content": "hi"}])
        client.chat([{"role": "user", "content": "hi"}], max_tokens=100)
    assert [r.get("max_tokens") for r in llm.requests] == [20, 8, 8]


def test_first_json_reads_fenced_and_embedded_values() -> None:
    assert first_json('```json\n{"a": 1}\n```') == {"a": 1}
    assert first_json('Here: [1, 2] and more') == [1, 2]
    assert first_json("nothing") is None and first_json('{"a": ') is None


def test_citations_citing_no_returned_source_are_removed() -> None:
    assert keep_valid("A [S1], B [S4][S2].", {1, 2}) == ("A [S1], B [S2].", ["[S4]"])
    removed: list[str] = []
    pieces = list(filter_stream(iter(["Basel [", "S", "7] was [S", "1] founded [S"]), {1}, removed))
    assert "".join(pieces) == "Basel  was [S1] founded [S" and removed == ["[S7]"]


SOURCES = [{"rank": 1, "text": "The University of Basel was founded in 1460 by Pope Pius II."},
           {"rank": 2, "text": "Cologne Cathedral was completed in 1880."}]


def test_uncited_sentences_get_the_source_that_supports_them() -> None:
    att = Attributor(SOURCES)
    answer = "Basel's university was founded in 1460! Cologne Cathedral was completed [S2]. I like rivers."
    assert att.text(answer) == ("Basel's university was founded in 1460 [S1]! Cologne Cathedral was "
                                "completed [S2]. I like rivers.")
    assert att.added == ["[S1]"]


def test_streamed_sentences_are_cited_holding_back_only_the_final_punctuation() -> None:
    att = Attributor(SOURCES)
    deltas = ["Cologne Cath", "edral was completed in 1880", ".", " Basel", " was founded in 1460", "."]
    out = list(att.stream(iter(deltas)))
    assert "".join(out) == "Cologne Cathedral was completed in 1880 [S2]. Basel was founded in 1460 [S1]."
    assert out[0] == "Cologne Cath" and att.added == ["[S2]", "[S1]"]
