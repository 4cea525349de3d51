"""Decoding a ``POST /v1/responses`` body into a ``GraphRequest``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from uuid import UUID

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

from lgos.config import GraphConfig, GraphFeature
from lgos.errors import InvalidRequestError
from lgos.interrupts.ids import INTERRUPT_TOOL, interrupt_id_of, run_id_of
from lgos.protocol import schema
from lgos.protocol import tools as tool_specs
from lgos.protocol.metadata import check_metadata, resolve_metadata
from lgos.protocol.pairing import CallLedger
from lgos.protocol.responses.tool_items import TOOL_ITEM_DECODERS
from lgos.protocol.validation import (
    GENERATION_CONTROL,
    check_fields,
    each_object,
    optional_field,
    reject_unknown,
    require_string,
    type_of,
)
from lgos.request import GraphRequest

ALLOWED_FIELDS = frozenset(schema.ResponsesRequest.model_fields)
"""The request fields this API accepts: those its OpenAPI request model declares."""
UNSUPPORTED_FIELDS: dict[str, str] = {
    **dict.fromkeys(
        (
            "temperature",
            "top_p",
            "max_output_tokens",
            "max_tool_calls",
            "top_logprobs",
            "truncation",
            "service_tier",
            "prompt_cache_key",
            "prompt_cache_retention",
        ),
        GENERATION_CONTROL,
    ),
    "reasoning": "Reasoning configuration belongs to the graph's own models.",
    "conversation": "LGOS keeps no server-side conversations; resend the input items you need.",
    "prompt": "Stored prompts are not supported.",
    "stream_options": "Stream options are not supported.",
}
_ROLES = {"user", "system", "developer", "assistant"}


@dataclass(frozen=True, slots=True)
class Resume:
    """An interrupt continuation: the paused run and one answer per pending interrupt id."""

    previous_response_id: str
    run_id: UUID
    answers: dict[str, str]


@dataclass(frozen=True, slots=True, kw_only=True)
class DecodedResponsesRequest:
    """What the graph runs (``graph_request``, ``resume``) and what the Response echoes."""

    graph_request: GraphRequest
    resume: Resume | None
    background: bool
    metadata: dict[str, str]
    instructions: str | None
    tools: list[dict[str, Any]]
    tool_choice: Any
    parallel_tool_calls: bool
    store: bool
    """Echoed on the Response: as sent, else whether the background engine keeps it."""

    @property
    def previous_response_id(self) -> str | None:
        """Echoed on the Response: only a resume names a previous Response."""
        return self.resume.previous_response_id if self.resume else None


def decode(body: dict[str, Any], model: str, config: GraphConfig) -> DecodedResponsesRequest:
    check_fields(body, allowed=ALLOWED_FIELDS, unsupported=UNSUPPORTED_FIELDS)
    stream = optional_field(body, "stream", bool) or False
    background = optional_field(body, "background", bool) or False
    store = optional_field(body, "store", bool)
    if background:
        if GraphFeature.BACKGROUND not in config.features:
            raise InvalidRequestError(
                f"The model '{model}' does not support background responses.", param="background"
            )
        if stream:
            raise InvalidRequestError(
                "Background responses are polling-only; do not combine background and stream.",
                param="stream",
            )
    elif store:
        raise InvalidRequestError(
            "LGOS does not store foreground responses; omit store or set it to false.",
            param="store",
        )
    interrupts = GraphFeature.INTERRUPTS in config.features
    previous = body.get("previous_response_id")
    resume: Resume | None = None
    if previous is not None:
        if not interrupts:
            raise InvalidRequestError(
                "previous_response_id is reserved for resuming an interrupted run; send the "
                "conversation's input items instead.",
                param="previous_response_id",
            )
        resume = decode_resume(previous, body.get("input"))
    _check_text_config(body.get("text"))
    _check_include(body.get("include"))
    optional_field(body, "user", str)
    optional_field(body, "safety_identifier", str)
    parallel_tool_calls = optional_field(body, "parallel_tool_calls", bool)
    instructions = optional_field(body, "instructions", str)
    metadata = check_metadata(body.get("metadata"))
    resolved = resolve_metadata(config, metadata)

    functions, selected, declared = _decode_tools(body.get("tools"), config)
    choice = tool_specs.tool_choice(body.get("tool_choice"), "tool_choice", functions, selected)

    messages: list[BaseMessage] = []
    if resume is None:
        if instructions:
            messages.append(SystemMessage(content=instructions))
        messages.extend(decode_input(body.get("input")))
        if interrupts and ends_with_interrupt(body.get("input")):
            raise InvalidRequestError(
                "Answering an interrupt needs previous_response_id set to the paused Response "
                "id; a replayed transcript cannot continue a paused run.",
                param="previous_response_id",
                code="missing_required_parameter",
            )

    graph_request = resolved.graph_request(
        "responses",
        model,
        messages,
        stream=stream,
        tools=functions,
        tool_choice=choice,
        server_tools=selected,
        instructions=instructions,
    )
    return DecodedResponsesRequest(
        graph_request=graph_request,
        resume=resume,
        background=background,
        metadata=metadata,
        instructions=instructions,
        tools=declared,
        tool_choice=choice if choice is not None else "auto",
        parallel_tool_calls=True if parallel_tool_calls is None else parallel_tool_calls,
        store=background if store is None else store,
    )


def _check_include(include: Any) -> None:
    """An empty ``include`` asks for nothing extra (the Agents SDK always sends one)."""
    if include is None or include == []:
        return
    if not isinstance(include, list):
        raise InvalidRequestError(
            "Invalid type for 'include': expected an array.", param="include", code="invalid_type"
        )
    named = ", ".join(repr(value) for value in include[:5])
    raise InvalidRequestError(
        f"Unsupported parameter: 'include' ({named}). LGOS returns no optional include data.",
        param="include",
        code="unsupported_parameter",
    )


def _check_text_config(text: Any) -> None:
    if text is None:
        return
    if not isinstance(text, dict) or set(text) - {"format"}:
        raise InvalidRequestError(
            "Only the default plain-text output format is supported.", param="text"
        )
    text_format = text.get("format")
    if text_format is not None and text_format != {"type": "text"}:
        raise InvalidRequestError(
            "Structured output is not supported; graphs own their output format.",
            param="text.format",
        )


def _decode_tools(
    raw: Any, config: GraphConfig
) -> tuple[list[dict[str, Any]], list[str], list[dict[str, Any]]]:
    """Client functions, selected server tools, and the declarations echoed on the Response."""
    functions: list[dict[str, Any]] = []
    selected: list[str] = []
    for index, spec in enumerate(tool_specs.tool_array(raw)):
        param = f"tools[{index}]"
        kind = type_of(spec)
        if kind == "function":
            functions.append(tool_specs.function_tool(spec, param, config))
        elif kind in ("custom", tool_specs.WEB_SEARCH):
            name = tool_specs.server_tool_selector(spec, param, config)
            if name in selected:
                raise InvalidRequestError(f"Tool '{name}' is selected twice.", param=param)
            selected.append(name)
        else:
            raise InvalidRequestError(
                f"Tool type {kind!r} is not supported; LGOS accepts function tools, registered "
                "custom server tools and web_search.",
                param=f"{param}.type",
            )
    tool_specs.check_unique_names(functions)
    declared = [*functions]
    declared.extend(
        {"type": "web_search"} if n == tool_specs.WEB_SEARCH else {"type": "custom", "name": n}
        for n in selected
    )
    return functions, selected, declared


def decode_input(raw: Any) -> list[BaseMessage]:
    if raw is None:
        raise InvalidRequestError(
            "Missing required parameter: 'input'.",
            param="input",
            code="missing_required_parameter",
        )
    if isinstance(raw, str):
        return [HumanMessage(content=raw)]
    if not isinstance(raw, list):
        raise InvalidRequestError(
            "Invalid type for 'input': expected a string or an array of items.", param="input"
        )
    messages: list[BaseMessage] = []
    ledger = CallLedger()
    for param, item in each_object(raw, "input"):
        kind = item.get("type", "message")
        if not isinstance(kind, str):  # a list or object here once reached a dict lookup: 500
            raise InvalidRequestError(
                f"Invalid type for '{param}.type': expected a string.", param=f"{param}.type"
            )
        if kind == "message":
            messages.append(_decode_message(item, param))
        elif kind in TOOL_ITEM_DECODERS:
            TOOL_ITEM_DECODERS[kind](item, param, messages, ledger)
        else:
            raise InvalidRequestError(
                f"Input item type {kind!r} is not supported.", param=f"{param}.type"
            )
    ledger.finish()
    return messages


_MESSAGE_FIELDS = frozenset(schema.MessageItem.model_fields)


def _decode_message(item: dict[str, Any], param: str) -> BaseMessage:
    reject_unknown(item, _MESSAGE_FIELDS, param)
    role = item.get("role")
    if not isinstance(role, str) or role not in _ROLES:
        raise InvalidRequestError(
            f"Invalid '{param}.role': expected one of user, system, developer, assistant.",
            param=f"{param}.role",
        )
    content = item.get("content")
    if role == "assistant":
        return _decode_assistant(item, content, param)
    for key in ("id", "status", "phase"):
        if item.get(key) is not None:
            raise InvalidRequestError(
                f"'{param}.{key}' is only valid on replayed assistant messages.",
                param=f"{param}.{key}",
            )
    blocks = _decode_input_content(content, f"{param}.content", allow_files=role == "user")
    if role == "user":
        return HumanMessage(content=blocks)
    return SystemMessage(content=blocks)


def _decode_input_content(content: Any, param: str, *, allow_files: bool) -> str | list[Any]:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise InvalidRequestError(
            f"Invalid type for '{param}': expected a string or an array of content parts.",
            param=param,
        )
    blocks: list[Any] = []
    for index, part in enumerate(content):
        part_param = f"{param}[{index}]"
        kind = type_of(part)
        if kind == "input_text":
            reject_unknown(part, schema.InputText.model_fields, part_param)
            blocks.append({"type": "text", "text": require_string(part, "text", part_param)})
        elif kind == "input_file" and allow_files:
            blocks.append(_decode_file(part, part_param))
        else:
            accepted = "input_text or input_file with a file_id" if allow_files else "input_text"
            raise InvalidRequestError(
                f"Content part type {kind!r} is not supported here; send {accepted}.",
                param=f"{part_param}.type",
            )
    return _collapse(blocks)


def _decode_file(part: dict[str, Any], param: str) -> dict[str, Any]:
    for key in ("file_data", "file_url", "filename"):
        if part.get(key) is not None:
            raise InvalidRequestError(
                "Inline file data, URLs and filenames are not supported; upload the file to the "
                "Files API and send its file_id.",
                param=f"{param}.{key}",
            )
    reject_unknown(part, {"type", "file_id", "file_data", "file_url", "filename", "detail"}, param)
    return {"type": "file", "file_id": require_string(part, "file_id", param)}


def _decode_assistant(item: dict[str, Any], content: Any, param: str) -> AIMessage:
    if isinstance(content, str):
        blocks: list[Any] = [{"type": "text", "text": content}]
    elif isinstance(content, list):
        blocks = []
        for index, part in enumerate(content):
            part_param = f"{param}.content[{index}]"
            kind = type_of(part)
            if kind in ("output_text", "input_text"):
                reject_unknown(part, schema.OutputText.model_fields, part_param)
                if part.get("parsed") is not None:
                    raise InvalidRequestError(
                        "Parsed structured output is not supported.", param=f"{part_param}.parsed"
                    )
                block: dict[str, Any] = {
                    "type": "text",
                    "text": require_string(part, "text", part_param),
                }
                annotations = part.get("annotations")
                if annotations:
                    block["annotations"] = annotations
                blocks.append(block)
            elif kind == "refusal":
                reject_unknown(part, schema.Refusal.model_fields, part_param)
                blocks.append(
                    {"type": "refusal", "refusal": require_string(part, "refusal", part_param)}
                )
            else:
                raise InvalidRequestError(
                    f"Content part type {kind!r} is not valid in an assistant message.",
                    param=f"{part_param}.type",
                )
    else:
        raise InvalidRequestError(f"Invalid type for '{param}.content'.", param=f"{param}.content")
    additional: dict[str, Any] = {}
    phase = item.get("phase")
    if phase is not None:
        if phase not in ("commentary", "final_answer"):
            raise InvalidRequestError(f"Invalid '{param}.phase'.", param=f"{param}.phase")
        additional["phase"] = phase
    metadata: dict[str, Any] = {}
    status = item.get("status")
    if status is not None:
        if status not in ("in_progress", "completed", "incomplete"):
            raise InvalidRequestError(f"Invalid '{param}.status'.", param=f"{param}.status")
        metadata["status"] = status
    message_id = item.get("id")
    if message_id is not None and not isinstance(message_id, str):
        raise InvalidRequestError(f"Invalid '{param}.id'.", param=f"{param}.id")
    return AIMessage(
        content=blocks, id=message_id, additional_kwargs=additional, response_metadata=metadata
    )


def _collapse(blocks: list[Any]) -> str | list[Any]:
    """A lone text part becomes plain string content, the shape most graphs expect."""
    if len(blocks) == 1 and blocks[0]["type"] == "text":
        return str(blocks[0]["text"])
    return blocks


def decode_resume(previous: Any, raw: Any) -> Resume:
    """Only function_call_output items answering interrupt calls: the whole batch, once each."""
    run_id = run_id_of(previous) if isinstance(previous, str) else None
    if run_id is None:
        raise InvalidRequestError(
            "previous_response_id is not a paused LGOS Response id.",
            param="previous_response_id",
        )
    if not isinstance(raw, list) or not raw:
        raise InvalidRequestError(
            "A resume sends only function_call_output items, one per pending interrupt call.",
            param="input",
        )
    answers: dict[str, str] = {}
    for index, item in enumerate(raw):
        param = f"input[{index}]"
        if type_of(item) != "function_call_output":
            raise InvalidRequestError(
                "A resume may only contain function_call_output items answering the paused "
                "interrupt calls.",
                param=f"{param}.type",
            )
        reject_unknown(item, schema.CallOutputItem.model_fields, param)
        call = item.get("call_id")
        interrupt_id = interrupt_id_of(call) if isinstance(call, str) else None
        if interrupt_id is None:
            raise InvalidRequestError(
                "call_id is not an interrupt call id from the paused Response.",
                param=f"{param}.call_id",
            )
        output = item.get("output")
        if not isinstance(output, str):
            raise InvalidRequestError(
                f"'{param}.output' must be a string.", param=f"{param}.output"
            )
        if interrupt_id in answers:
            raise InvalidRequestError(
                f"Duplicate output for interrupt call '{call}'.",
                param=f"{param}.call_id",
                code="duplicate_tool_output",
            )
        answers[interrupt_id] = output
    return Resume(previous, run_id, answers)


def ends_with_interrupt(raw: Any) -> bool:
    """An ordinary request whose input ends with interrupt calls or their outputs."""
    if not isinstance(raw, list) or not raw or not isinstance(raw[-1], dict):
        return False
    last = raw[-1]
    if last.get("type") == "function_call":
        return last.get("name") == INTERRUPT_TOOL
    if last.get("type") == "function_call_output":
        call = last.get("call_id")
        return isinstance(call, str) and interrupt_id_of(call) is not None
    return False
