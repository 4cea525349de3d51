"""Decoding a ``POST /v1/chat/completions`` body into a ``GraphRequest``: the strict subset."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import orjson
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)

from lgos.config import GraphConfig, GraphFeature
from lgos.errors import InvalidRequestError
from lgos.protocol import tools as tool_specs
from lgos.protocol.metadata import check_metadata, resolve_metadata
from lgos.protocol.pairing import CallLedger
from lgos.protocol.schema import ChatRequest
from lgos.protocol.validation import (
    GENERATION_CONTROL,
    check_fields,
    each_object,
    optional_field,
    reject_unknown,
    type_of,
)
from lgos.request import GraphRequest

ALLOWED_FIELDS = frozenset(ChatRequest.model_fields)
"""The request fields this API accepts: those its OpenAPI request model declares."""
_DEPRECATED = "Deprecated function calling is not supported; use tools and tool_choice."
_FUNCTIONS_ONLY = (
    "Chat Completions accepts only function tools; server tools are selected through the "
    "Responses API."
)
UNSUPPORTED_FIELDS: dict[str, str] = {
    **dict.fromkeys(
        (
            "temperature",
            "top_p",
            "max_tokens",
            "max_completion_tokens",
            "n",
            "stop",
            "seed",
            "presence_penalty",
            "frequency_penalty",
            "logit_bias",
            "logprobs",
            "top_logprobs",
            "reasoning_effort",
            "service_tier",
            "verbosity",
            "prediction",
        ),
        GENERATION_CONTROL,
    ),
    "response_format": "Structured output is not supported; graphs own their output format.",
    "functions": _DEPRECATED,
    "function_call": _DEPRECATED,
    "modalities": "Only text output is supported.",
    "audio": "Audio output is not supported.",
    "web_search_options": "Chat Completions cannot select server tools; use the Responses API.",
    "prompt_cache_key": "Prompt-cache fields are not supported.",
    "prompt_cache_retention": "Prompt-cache fields are not supported.",
}


@dataclass(frozen=True, slots=True)
class DecodedChatRequest:
    graph_request: GraphRequest
    include_usage: bool


def decode(body: dict[str, Any], model: str, config: GraphConfig) -> DecodedChatRequest:
    check_fields(body, allowed=ALLOWED_FIELDS, unsupported=UNSUPPORTED_FIELDS)
    if GraphFeature.INTERRUPTS in config.features:
        raise InvalidRequestError(
            f"The model '{model}' can pause for human input, which only the Responses API "
            "supports; use POST /v1/responses.",
            param="model",
        )
    stream = optional_field(body, "stream", bool) or False
    if optional_field(body, "store", bool):
        raise InvalidRequestError("LGOS does not store completions.", param="store")
    optional_field(body, "user", str)
    optional_field(body, "safety_identifier", str)
    optional_field(body, "parallel_tool_calls", bool)
    include_usage = _stream_options(body.get("stream_options"), stream)
    metadata = check_metadata(body.get("metadata"))
    resolved = resolve_metadata(config, metadata)
    functions = _decode_tools(body.get("tools"), config)
    choice = _decode_tool_choice(body.get("tool_choice"), functions)
    messages = decode_messages(body.get("messages"))
    request = resolved.graph_request(
        "chat", model, messages, stream=stream, tools=functions, tool_choice=choice
    )
    return DecodedChatRequest(graph_request=request, include_usage=include_usage)


def _stream_options(options: Any, stream: bool) -> bool:
    if options is None:
        return False
    if not stream:
        raise InvalidRequestError(
            "stream_options is only allowed when stream is true.", param="stream_options"
        )
    if not isinstance(options, dict) or set(options) - {"include_usage"}:
        raise InvalidRequestError(
            "Only stream_options.include_usage is supported.", param="stream_options"
        )
    include = options.get("include_usage", False)
    if not isinstance(include, bool):
        raise InvalidRequestError(
            "Invalid type for 'stream_options.include_usage'.", param="stream_options.include_usage"
        )
    return include


def _decode_tools(raw: Any, config: GraphConfig) -> list[dict[str, Any]]:
    functions = []
    for index, spec in enumerate(tool_specs.tool_array(raw)):
        param = f"tools[{index}]"
        if type_of(spec) != "function":
            raise InvalidRequestError(_FUNCTIONS_ONLY, param=f"{param}.type")
        if set(spec) != {"type", "function"}:
            raise InvalidRequestError(f"Invalid '{param}'.", param=param)
        functions.append(tool_specs.function_tool(spec["function"], f"{param}.function", config))
    tool_specs.check_unique_names(functions)
    return functions


def _decode_tool_choice(choice: Any, functions: list[dict[str, Any]]) -> Any:
    if isinstance(choice, dict) and choice.get("type") == "function":
        function = choice.get("function")
        name = function.get("name") if isinstance(function, dict) else None
        choice = {"type": "function", "name": name}
    elif isinstance(choice, dict):
        raise InvalidRequestError("tool_choice must name a function.", param="tool_choice")
    return tool_specs.tool_choice(choice, "tool_choice", functions, [])


def decode_messages(raw: Any) -> list[BaseMessage]:
    if not isinstance(raw, list) or not raw:
        raise InvalidRequestError(
            "'messages' must be a non-empty array.",
            param="messages",
            code="missing_required_parameter" if raw is None else None,
        )
    messages: list[BaseMessage] = []
    ledger = CallLedger()
    for param, message in each_object(raw, "messages"):
        role = message.get("role")
        decoder = _DECODERS.get(role) if isinstance(role, str) else None
        if decoder is None:
            reason = _DEPRECATED if role == "function" else "Unsupported message role."
            raise InvalidRequestError(f"{reason}", param=f"{param}.role")
        decoded = decoder(message, param)
        if isinstance(decoded, AIMessage):
            for call_index, call in enumerate(decoded.tool_calls):
                ledger.call(str(call["id"]), "function", f"{param}.tool_calls[{call_index}].id")
        elif isinstance(decoded, ToolMessage):
            ledger.output(decoded.tool_call_id, "function", f"{param}.tool_call_id")
        messages.append(decoded)
    ledger.finish()
    return messages


_reject_unknown = functools.partial(
    reject_unknown, code="unsupported_parameter", label="Unsupported parameter"
)


def _text_content(content: Any, param: str, *, files: bool = False) -> str | list[Any]:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise InvalidRequestError(f"Invalid type for '{param}'.", param=param)
    blocks: list[Any] = []
    for index, part in enumerate(content):
        part_param = f"{param}[{index}]"
        kind = type_of(part)
        if kind == "text" and isinstance(part.get("text"), str) and set(part) == {"type", "text"}:
            blocks.append({"type": "text", "text": part["text"]})
        elif kind == "file" and files:
            blocks.append(_file_part(part, part_param))
        else:
            raise InvalidRequestError(
                f"Content part type {kind!r} is not supported; send text"
                + (" or file parts with a file_id." if files else " parts."),
                param=f"{part_param}.type" if kind not in ("text", "file") else part_param,
            )
    if len(blocks) == 1 and blocks[0]["type"] == "text":
        return str(blocks[0]["text"])
    return blocks


def _file_part(part: dict[str, Any], param: str) -> dict[str, Any]:
    file = part.get("file")
    if set(part) != {"type", "file"} or not isinstance(file, dict):
        raise InvalidRequestError(f"Invalid '{param}'.", param=param)
    for key in ("file_data", "filename"):
        if key in file:
            raise InvalidRequestError(
                "Inline file data and filenames are not supported; upload the file to the "
                "Files API and send its file_id.",
                param=f"{param}.file.{key}",
            )
    file_id = file.get("file_id")
    if set(file) != {"file_id"} or not isinstance(file_id, str):
        raise InvalidRequestError("A file part needs exactly file.file_id.", param=f"{param}.file")
    return {"type": "file", "file_id": file_id}


def _system(message: dict[str, Any], param: str) -> BaseMessage:
    _reject_unknown(message, {"role", "content", "name"}, param)
    return SystemMessage(content=_text_content(message.get("content"), f"{param}.content"))


def _user(message: dict[str, Any], param: str) -> BaseMessage:
    _reject_unknown(message, {"role", "content", "name"}, param)
    return HumanMessage(
        content=_text_content(message.get("content"), f"{param}.content", files=True)
    )


def _assistant(message: dict[str, Any], param: str) -> BaseMessage:
    _reject_unknown(
        message,
        {
            "role",
            "content",
            "name",
            "refusal",
            "tool_calls",
            "function_call",
            "audio",
            "annotations",
        },
        param,
    )
    for key in ("function_call", "audio"):
        if message.get(key) is not None:
            raise InvalidRequestError(
                _DEPRECATED if key == "function_call" else "Audio is not supported.",
                param=f"{param}.{key}",
            )
    content = message.get("content")
    blocks: list[Any] = []
    if isinstance(content, str):
        blocks.append({"type": "text", "text": content})
    elif isinstance(content, list):
        for index, part in enumerate(content):
            kind = type_of(part)
            if kind == "text" and isinstance(part.get("text"), str):
                blocks.append({"type": "text", "text": part["text"]})
            elif kind == "refusal" and isinstance(part.get("refusal"), str):
                blocks.append({"type": "refusal", "refusal": part["refusal"]})
            else:
                raise InvalidRequestError(
                    "Assistant content parts must be text or refusal.",
                    param=f"{param}.content[{index}]",
                )
    elif content is not None:
        raise InvalidRequestError(f"Invalid type for '{param}.content'.", param=f"{param}.content")
    additional: dict[str, Any] = {}
    refusal = message.get("refusal")
    if refusal is not None:
        if not isinstance(refusal, str):
            raise InvalidRequestError(f"Invalid '{param}.refusal'.", param=f"{param}.refusal")
        additional["refusal"] = refusal
    annotations = message.get("annotations")
    if annotations is not None:
        if not isinstance(annotations, list):
            raise InvalidRequestError(
                f"Invalid '{param}.annotations'.", param=f"{param}.annotations"
            )
        additional["annotations"] = annotations
    tool_calls = [
        _tool_call(call, f"{param}.tool_calls[{i}]")
        for i, call in enumerate(message.get("tool_calls") or [])
    ]
    return AIMessage(content=blocks, tool_calls=tool_calls, additional_kwargs=additional)


def _tool_call(call: Any, param: str) -> dict[str, Any]:
    function = call.get("function") if isinstance(call, dict) else None
    if (
        not isinstance(call, dict)
        or call.get("type") != "function"
        or not isinstance(call.get("id"), str)
        or not isinstance(function, dict)
        or not isinstance(function.get("name"), str)
        or not isinstance(function.get("arguments"), str)
    ):
        raise InvalidRequestError(
            "Each tool call needs id, type 'function' and function name and arguments.",
            param=param,
        )
    try:
        args = orjson.loads(function["arguments"])
    except orjson.JSONDecodeError:
        args = None
    if not isinstance(args, dict):
        raise InvalidRequestError(
            "Tool call arguments must be a JSON object string.", param=f"{param}.function.arguments"
        )
    return {"id": call["id"], "name": function["name"], "args": args, "type": "tool_call"}


def _tool(message: dict[str, Any], param: str) -> BaseMessage:
    _reject_unknown(message, {"role", "content", "tool_call_id"}, param)
    call_id = message.get("tool_call_id")
    if not isinstance(call_id, str):
        raise InvalidRequestError(
            "Tool messages need a tool_call_id.", param=f"{param}.tool_call_id"
        )
    return ToolMessage(
        content=_text_content(message.get("content"), f"{param}.content"), tool_call_id=call_id
    )


_DECODERS = {
    "system": _system,
    "developer": _system,
    "user": _user,
    "assistant": _assistant,
    "tool": _tool,
}
