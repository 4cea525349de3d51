"""Hypothesis properties of LGOS's decoders and codecs: any input is a result or a precise 400.

Responses and Chat request decoding, the interrupt id codec, SSE framing (no text can add a
field or an event), metadata limits, settings merging, and the Files service's filenames.
"""

from __future__ import annotations

import json
from typing import Any
from uuid import UUID

import orjson
from files_service.filenames import MAX_FILENAME_BYTES, content_disposition, sanitize_filename
from hypothesis import given
from hypothesis import strategies as st
from lgos import ClientSettings, GraphConfig, GraphFeature, InvalidRequestError
from lgos.interrupts.ids import call_id, interrupt_id_of, paused_response_id, run_id_of
from lgos.protocol.chat.decode import decode as decode_chat
from lgos.protocol.chat.encode import _DELTA_TAIL, CompletionShell
from lgos.protocol.metadata import (
    MAX_KEY_CHARS,
    MAX_PAIRS,
    MAX_VALUE_CHARS,
    check_metadata,
    resolve_settings,
)
from lgos.protocol.responses.decode import decode as decode_responses
from lgos.protocol.responses.decode import decode_resume
from lgos.protocol.responses.encode import _Encoder
from lgos.protocol.responses.items import ResponseShell

from tests.support.fuzz import fuzz


class Settings(ClientSettings):
    flag: bool = False
    count: int = 1
    nested: dict[str, int] = {"a": 1}


def _graph() -> Any:
    return None


CONFIG = GraphConfig(
    graph=_graph,
    description="d",
    client_settings=Settings,
    server_tools=["web_search", "package_version"],
    features=frozenset({GraphFeature.BACKGROUND}),
)
INTERRUPTS = GraphConfig(
    graph=_graph, description="d", features=frozenset({GraphFeature.INTERRUPTS})
)

texts = st.text(max_size=40) | st.sampled_from(
    ["", "\n", "\r\n", "\r", "data: x", "event: y", "\n\ndata: [DONE]\n\n", "\u2028", ":"]
)
leaves = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | texts
values = st.recursive(
    leaves,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3),
    max_leaves=10,
)
part = st.fixed_dictionaries(
    {"type": st.sampled_from(["input_text", "input_file", "output_text", "refusal", "text"])},
    optional={"text": values, "file_id": values, "refusal": values, "annotations": values},
)
item = st.fixed_dictionaries(
    {},
    optional={
        "type": st.sampled_from(
            [
                "message",
                "function_call",
                "function_call_output",
                "custom_tool_call",
                "custom_tool_call_output",
                "web_search_call",
                "reasoning",
            ]
        )
        | values,
        "role": st.sampled_from(["user", "assistant", "system", "developer", "tool"]) | values,
        "content": values | st.lists(part, max_size=3),
        "call_id": st.sampled_from(["c1", "c2"]) | values,
        "name": values,
        "arguments": st.sampled_from(["{}", '{"a": 1}', "[", ""]) | values,
        "output": values,
        "input": values,
        "id": values,
        "status": values,
    },
)
tool = st.fixed_dictionaries(
    {"type": st.sampled_from(["function", "custom", "web_search", "file_search"]) | values},
    optional={
        "name": st.sampled_from(["f", "package_version", "web_search"]) | values,
        "parameters": values,
        "function": values,
        "description": values,
    },
)
responses_bodies = st.fixed_dictionaries(
    {"input": texts | st.lists(item, max_size=5) | values},
    optional={
        "tools": st.lists(tool, max_size=3) | values,
        "tool_choice": st.sampled_from(["auto", "none", "required"]) | values,
        "metadata": st.dictionaries(texts, texts, max_size=3) | values,
        "stream": values,
        "background": values,
        "store": values,
        "include": values,
        "text": values,
        "instructions": values,
        "parallel_tool_calls": values,
        "user": values,
    },
)


@fuzz()
@given(body=responses_bodies)
def test_responses_decoding_is_a_request_or_a_400(body: dict[str, Any]) -> None:
    try:
        decoded = decode_responses(body, "m", CONFIG)
    except InvalidRequestError as error:
        assert error.status_code == 400
        assert error.param is None or isinstance(error.param, str)
        return
    assert decoded.graph_request.model == "m"


@fuzz()
@given(previous=texts | st.just(paused_response_id(UUID(int=7))), raw=values | st.lists(item))
def test_resume_decoding_is_a_resume_or_a_400(previous: str, raw: Any) -> None:
    try:
        resume = decode_resume(previous, raw)
    except InvalidRequestError as error:
        assert error.param is not None
        return
    assert resume.run_id == UUID(int=7)
    assert all(isinstance(v, str) for v in resume.answers.values())


chat_messages = st.lists(
    st.fixed_dictionaries(
        {
            "role": st.sampled_from(
                ["user", "assistant", "system", "developer", "tool", "function"]
            )
            | values
        },
        optional={
            "content": values | st.lists(part, max_size=2),
            "tool_calls": values,
            "tool_call_id": values,
            "name": values,
            "function_call": values,
        },
    ),
    max_size=4,
)


@fuzz()
@given(
    messages=chat_messages | values,
    extra=st.dictionaries(
        st.sampled_from(
            [
                "tools",
                "tool_choice",
                "stream",
                "stream_options",
                "metadata",
                "store",
                "temperature",
                "functions",
            ]
        ),
        values,
        max_size=3,
    ),
)
def test_chat_decoding_is_a_request_or_a_400(messages: Any, extra: dict[str, Any]) -> None:
    try:
        decode_chat({"messages": messages, **extra}, "m", CONFIG)
    except InvalidRequestError as error:
        assert error.status_code == 400


@fuzz()
@given(st.text())
def test_any_string_is_a_paused_id_or_not(value: str) -> None:
    run = run_id_of(value)
    assert run is None or paused_response_id(run).startswith(f"resp_lg_{run.hex}_")
    interrupt = interrupt_id_of(value)
    assert interrupt is None or call_id(interrupt) == value


@fuzz()
@given(st.uuids(), st.text("0123456789abcdef", min_size=1, max_size=64))
def test_interrupt_ids_round_trip(run: UUID, interrupt: str) -> None:
    assert run_id_of(paused_response_id(run)) == run
    assert interrupt_id_of(call_id(interrupt)) == interrupt


def sse_events(stream: bytes) -> list[dict[str, str]]:
    """A strict reader after the SSE spec: events end at a blank line; CR, LF, CRLF end lines."""
    text = stream.decode()
    assert text.endswith("\n\n")
    events = []
    for block in text.replace("\r\n", "\n").replace("\r", "\n").split("\n\n")[:-1]:
        fields: dict[str, str] = {}
        for line in block.split("\n"):
            name, _, value = line.partition(": ")
            assert name in ("event", "data") and name not in fields, line
            fields[name] = value
        events.append(fields)
    return events


@fuzz()
@given(st.lists(st.text(), min_size=1, max_size=5))
def test_no_text_adds_an_sse_field_or_event(deltas: list[str]) -> None:
    shell = ResponseShell(model="m", request=decode_responses({"input": "x"}, "m", CONFIG))
    encoder = _Encoder(shell)
    opened = b"".join(encoder.open_answer())
    stream = opened + b"".join(encoder.delta(d) for d in deltas) + encoder.status(deltas[0])
    events = sse_events(stream)
    sent = [json.loads(e["data"]) for e in events if e.get("event") == "response.output_text.delta"]
    assert [e["delta"] for e in sent if e["item_id"] == encoder.answer_id] == deltas
    assert all(json.loads(e["data"])["type"] == e["event"] for e in events)
    completion = CompletionShell(model="m\n\ndata: x")
    chat = b"".join(completion.delta_head() + orjson.dumps(d) + _DELTA_TAIL for d in deltas)
    chat_events = sse_events(chat + completion.chunk({"content": deltas[-1]}))
    assert len(chat_events) == len(deltas) + 1 and all(set(e) == {"data"} for e in chat_events)
    assert [json.loads(e["data"])["choices"][0]["delta"]["content"] for e in chat_events] == [
        *deltas,
        deltas[-1],
    ]


@fuzz()
@given(st.dictionaries(st.text(max_size=80), st.text(max_size=600) | values, max_size=20))
def test_metadata_is_accepted_exactly_within_openai_limits(metadata: dict[str, Any]) -> None:
    within = (
        len(metadata) <= MAX_PAIRS
        and all(len(k) <= MAX_KEY_CHARS for k in metadata)
        and all(isinstance(v, str) and len(v) <= MAX_VALUE_CHARS for v in metadata.values())
        and all(not k.startswith("lgos_") or k == "lgos_settings" for k in metadata)
    )
    try:
        assert check_metadata(metadata) == metadata
    except InvalidRequestError as error:
        assert not within
        assert error.param is not None and error.param.startswith("metadata")
    else:
        assert within


@fuzz()
@given(st.dictionaries(st.sampled_from(["flag", "count", "nested", "other"]), values, max_size=4))
def test_settings_merge_shallowly_over_the_defaults_or_fail_as_a_400(
    supplied: dict[str, Any],
) -> None:
    try:
        settings = resolve_settings(CONFIG, json.dumps(supplied))
    except InvalidRequestError as error:
        assert error.param == "metadata.lgos_settings"
        return
    assert settings is not None
    assert settings.model_dump() == {**Settings().model_dump(), **supplied}


@fuzz()
@given(st.text() | st.none())
def test_filenames_are_one_harmless_component(raw: str | None) -> None:
    name = sanitize_filename(raw)
    assert name and "/" not in name and "\\" not in name
    assert not name.startswith(".")
    assert len(name.encode()) <= MAX_FILENAME_BYTES
    assert all(ord(ch) >= 32 and ch not in "\x7f\x85" for ch in name)
    header = content_disposition(name)
    assert header.isascii() and "\r" not in header and "\n" not in header
    assert sanitize_filename(name) == name
