"""Deterministic function calling: which bound tools to call, and with what arguments.

A tool is called when ``tool_choice`` forces it, or when the latest user message names it (all
words of the tool name appear: "package version" → ``package_version``; the first word, an MCP
client's server prefix, may be left out when two or more remain), or when it is a search
source the message asks for in natural words (:data:`SOURCE_PHRASES`: "my notes", "what did we
save", "knowledge" pick a tool named like ``knowledge_search``; "web", "online", "latest" pick
one named like ``web_search``; both when both are asked). Arguments are built
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


SOURCE_PHRASES: dict[str, re.Pattern[str]] = {
    "knowledge": re.compile(
        r"\b(my|our|the team'?s?)\s+notes?\b|\bnotes?\s+(we|i)\s+(saved|kept)\b"
        r"|\bwhat\s+(did|have)\s+(we|i)\s+(save|saved|note|noted)\b|\bsaved\s+notes?\b"
        r"|\bknowledge\b|\bnotebook\b|\bwe\s+saved\b",
        re.IGNORECASE,
    ),
    "web": re.compile(
        r"\b(web|online|internet|latest|current|news)\b|\bon\s+the\s+net\b", re.IGNORECASE
    ),
}
"""Natural phrasings of a search source, keyed by a word of the source tool's name."""


def asked_sources(text: str, tools: list[ToolSpec]) -> list[ToolSpec]:
    """The offered search tools whose source the message asks for, in offer order."""
    chosen = []
    for spec in tools:
        words = set(re.split(r"[_\-\s]+", spec.name.lower()))
        if "search" not in words:
            continue
        if any(key in words and pattern.search(text) for key, pattern in SOURCE_PHRASES.items()):
            chosen.append(spec)
    return chosen


def _named_in(text: str, name: str) -> bool:
    """All words of the name appear; the first may be left out when two or more remain (the
    prefix an MCP client adds: "demo db execute sql" names ``gw_demo_db-execute_sql``)."""
    words = [w for w in re.split(r"[_\-\s]+", name.lower()) if w]
    lowered = text.lower()

    def all_in(required: list[str]) -> bool:
        return bool(required) and all(re.search(rf"\b{re.escape(w)}\b", lowered) for w in required)

    return all_in(words) or (len(words) > 2 and all_in(words[1:]))


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
        asked = asked_sources(text, tools)
        chosen = [t for t in tools if _named_in(text, t.name) or t in asked]
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
