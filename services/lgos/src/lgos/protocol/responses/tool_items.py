"""Replayed tool items (function, custom and web search calls and their outputs) as LangChain.

Calls attach to the assistant message they followed (a new one when none is open), as tool calls
plus the original item as a content block, so ids, status and actions survive into the content a
model adapter replays. Outputs become ``ToolMessage``s.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from lgos.errors import InvalidRequestError
from lgos.protocol.pairing import CallKind, CallLedger
from lgos.protocol.validation import reject_unknown, require_string

# "async_": the SDK serializes its aliased "async" field under the Python name when it replays
# an item it parsed from a response that carried the field (as LiteLLM's responses do).
_SDK_NULL_FIELDS = ("caller", "namespace", "async", "async_", "created_by")
_STATUSES = ("in_progress", "completed", "incomplete", "searching", "failed")


def _check(item: dict[str, Any], allowed: set[str], param: str) -> None:
    reject_unknown(item, allowed | set(_SDK_NULL_FIELDS), param)
    for key in _SDK_NULL_FIELDS:
        if item.get(key) is not None:
            raise InvalidRequestError(
                f"'{param}.{key}' is not supported; send null or omit it.",
                param=f"{param}.{key}",
            )
    status = item.get("status")
    if status is not None and status not in _STATUSES:
        raise InvalidRequestError(f"Invalid '{param}.status'.", param=f"{param}.status")
    item_id = item.get("id")
    if item_id is not None and not isinstance(item_id, str):
        raise InvalidRequestError(f"Invalid '{param}.id'.", param=f"{param}.id")


def _open_assistant(messages: list[BaseMessage]) -> AIMessage:
    last = messages[-1] if messages else None
    if isinstance(last, AIMessage) and isinstance(last.content, list):
        return last
    message = AIMessage(content=[])
    messages.append(message)
    return message


def _attach(item: dict[str, Any], messages: list[BaseMessage]) -> AIMessage:
    """Keep the replayed item itself in the assistant message it followed."""
    message = _open_assistant(messages)
    message.content.append({k: v for k, v in item.items() if v is not None})  # type: ignore[union-attr]
    return message


def _call(
    item: dict[str, Any],
    param: str,
    value_field: str,
    kind: CallKind,
    messages: list[BaseMessage],
    ledger: CallLedger,
) -> tuple[str, str, str, AIMessage]:
    """Validate a replayed call, record it for pairing, attach it: ``(call_id, name, value,
    message)``, where ``value`` is its ``arguments`` or ``input``."""
    _check(item, {"type", "call_id", "name", value_field, "id", "status"}, param)
    call_id = require_string(item, "call_id", param)
    name = require_string(item, "name", param)
    value = require_string(item, value_field, param)
    ledger.call(call_id, kind, f"{param}.call_id")
    return call_id, name, value, _attach(item, messages)


def _function_call(
    item: dict[str, Any], param: str, messages: list[BaseMessage], ledger: CallLedger
) -> None:
    call_id, name, arguments, message = _call(
        item, param, "arguments", "function", messages, ledger
    )
    try:
        args = orjson.loads(arguments)
    except orjson.JSONDecodeError:
        args = None
    if isinstance(args, dict):
        message.tool_calls.append({"id": call_id, "name": name, "args": args, "type": "tool_call"})
    elif item.get("status") == "incomplete":
        message.invalid_tool_calls.append(
            {
                "id": call_id,
                "name": name,
                "args": arguments,
                "error": None,
                "type": "invalid_tool_call",
            }
        )
    else:
        raise InvalidRequestError(
            "Function call arguments must be a JSON object string.", param=f"{param}.arguments"
        )


def _custom_call(
    item: dict[str, Any], param: str, messages: list[BaseMessage], ledger: CallLedger
) -> None:
    call_id, name, tool_input, message = _call(item, param, "input", "custom", messages, ledger)
    # LangChain's custom tools take their free-form input as the single ``__arg1`` argument.
    message.tool_calls.append(
        {"id": call_id, "name": name, "args": {"__arg1": tool_input}, "type": "tool_call"}
    )


def _web_search_call(
    item: dict[str, Any], param: str, messages: list[BaseMessage], ledger: CallLedger
) -> None:
    _check(item, {"type", "id", "status", "action"}, param)
    require_string(item, "id", param)
    action = item.get("action")
    if action is not None and not isinstance(action, dict):
        raise InvalidRequestError(f"Invalid '{param}.action'.", param=f"{param}.action")
    _attach(item, messages)


def _output(kind: str) -> Callable[[dict[str, Any], str, list[BaseMessage], CallLedger], None]:
    def decode(
        item: dict[str, Any], param: str, messages: list[BaseMessage], ledger: CallLedger
    ) -> None:
        _check(item, {"type", "call_id", "output", "id", "status"}, param)
        call_id = require_string(item, "call_id", param)
        output = item.get("output")
        if not isinstance(output, str):
            raise InvalidRequestError(
                f"'{param}.output' must be a string.", param=f"{param}.output"
            )
        ledger.output(call_id, "function" if kind == "function" else "custom", f"{param}.call_id")
        content: Any = output
        if kind == "custom":
            content = [{"type": "custom_tool_call_output", "output": output}]
        messages.append(ToolMessage(content=content, tool_call_id=call_id, id=item.get("id")))

    return decode


TOOL_ITEM_DECODERS: dict[
    str, Callable[[dict[str, Any], str, list[BaseMessage], CallLedger], None]
] = {
    "function_call": _function_call,
    "function_call_output": _output("function"),
    "custom_tool_call": _custom_call,
    "custom_tool_call_output": _output("custom"),
    "web_search_call": _web_search_call,
}
