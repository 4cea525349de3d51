"""Deterministic function calling: which bound tools to call, and with what arguments.

A tool is called when ``tool_choice`` forces it, or when the latest user message names it (all
words of the tool name appear: "package version" → ``package_version``). Arguments are built
from that message: integer arrays get its integers, strings get its text. Once a tool result is
the last input, the model answers instead of calling again.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Any, Literal

import orjson

from offline_model.answer import Prompt

ToolKind = Literal["function", "custom"]
_INTEGER = re.compile(r"-?\d+")


@dataclass(frozen=True, slots=True)
class ToolSpec:
    name: str
    kind: ToolKind
    parameters: dict[str, Any]


@dataclass(frozen=True, slots=True)
class PlannedCall:
    call_id: str
    name: str
    kind: ToolKind
    payload: str
    """JSON arguments for a function, free-form input for a custom tool."""


def chat_tools(raw: Any) -> list[ToolSpec]:
    specs = []
    for tool in raw or []:
        function = tool.get("function") or {}
        if tool.get("type") == "function" and isinstance(function.get("name"), str):
            specs.append(ToolSpec(function["name"], "function", function.get("parameters") or {}))
    return specs


def responses_tools(raw: Any) -> list[ToolSpec]:
    specs = []
    for tool in raw or []:
        kind = tool.get("type")
        if kind in ("function", "custom") and isinstance(tool.get("name"), str):
            specs.append(ToolSpec(tool["name"], kind, tool.get("parameters") or {}))
    return specs


def forced_name(choice: Any) -> str | None:
    """The tool a named ``tool_choice`` forces, in either API's shape."""
    if not isinstance(choice, dict):
        return None
    if isinstance(choice.get("name"), str):
        return str(choice["name"])
    function = choice.get("function")
    if isinstance(function, dict) and isinstance(function.get("name"), str):
        return str(function["name"])
    return None


def _named_in(text: str, name: str) -> bool:
    words = [w for w in re.split(r"[_\-\s]+", name.lower()) if w]
    lowered = text.lower()
    return bool(words) and all(re.search(rf"\b{re.escape(w)}\b", lowered) for w in words)


def _arguments(spec: ToolSpec, text: str) -> str:
    if spec.kind == "custom":
        return text
    properties = spec.parameters.get("properties") or {}
    integers = [int(n) for n in _INTEGER.findall(text)]
    args: dict[str, Any] = {}
    for key, schema in properties.items():
        kind = schema.get("type") if isinstance(schema, dict) else None
        items = schema.get("items") if isinstance(schema, dict) else None
        if kind == "array" and isinstance(items, dict) and items.get("type") == "integer":
            args[key] = integers
        elif kind in ("integer", "number"):
            args[key] = integers[0] if integers else 0
        elif kind == "boolean":
            args[key] = True
        elif kind == "array":
            args[key] = [text]
        else:
            args[key] = text
    return orjson.dumps(args).decode()


def plan_calls(prompt: Prompt, tools: list[ToolSpec], choice: Any) -> list[PlannedCall]:
    if not tools or choice == "none" or prompt.ends_with_tool_output:
        return []
    text = prompt.latest
    forced = forced_name(choice)
    if forced is not None:
        chosen = [t for t in tools if t.name == forced]
    else:
        chosen = [t for t in tools if _named_in(text, t.name)]
        if not chosen and choice == "required":
            chosen = tools[:1]
    calls = []
    for index, spec in enumerate(chosen):
        digest = hashlib.sha256(f"{text}|{spec.name}|{index}|{len(prompt.user)}".encode())
        calls.append(
            PlannedCall(
                f"call_{digest.hexdigest()[:24]}", spec.name, spec.kind, _arguments(spec, text)
            )
        )
    return calls
