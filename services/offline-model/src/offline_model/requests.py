"""The request shapes offline-model reads, validated before any handler touches a body.

The stand-in is lenient about fields it ignores (extras pass), but every field it reads has a
type, so no body can reach a handler in a shape it would trip over: a bad one is a 400.
"""

from __future__ import annotations

from typing import Any

import orjson
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from offline_model.errors import RequestError

MAX_ITEMS = 4096
MAX_TOOLS = 128
MAX_DEPTH = 64


_UNION_MEMBERS = frozenset({"str", "int", "bool", "float", "none"})


class _Lenient(BaseModel):
    model_config = ConfigDict(extra="allow", strict=True)


Content = str | list[Any] | None


class ToolParameters(_Lenient):
    properties: dict[str, Any] | None = None


class ChatFunction(_Lenient):
    name: str | None = None
    parameters: ToolParameters | None = None


class ChatTool(_Lenient):
    type: str | None = None
    function: ChatFunction | None = None


class ChatMessage(_Lenient):
    role: str | None = None
    content: Content = None


class StreamOptions(_Lenient):
    include_usage: bool | None = None


class ChatRequest(_Lenient):
    model: str | None = None
    messages: list[ChatMessage] = Field(min_length=1, max_length=MAX_ITEMS)
    tools: list[ChatTool] | None = Field(default=None, max_length=MAX_TOOLS)
    tool_choice: str | dict[str, Any] | None = None
    stream: bool | None = None
    stream_options: StreamOptions | None = None
    max_tokens: int | None = None
    max_completion_tokens: int | None = None


class ResponsesTool(_Lenient):
    type: str | None = None
    name: str | None = None
    parameters: ToolParameters | None = None


class ResponsesItem(_Lenient):
    type: str = "message"
    role: str | None = None
    content: Content = None
    output: Content = None


class ResponsesRequest(_Lenient):
    model: str | None = None
    input: str | list[ResponsesItem] = Field(max_length=MAX_ITEMS)
    instructions: str | None = None
    tools: list[ResponsesTool] | None = Field(default=None, max_length=MAX_TOOLS)
    tool_choice: str | dict[str, Any] | None = None
    stream: bool | None = None
    metadata: dict[str, Any] | None = None
    max_output_tokens: int | None = None


def parse(raw: bytes, model: type[BaseModel]) -> dict[str, Any]:
    """The body as a dict, once it parsed as JSON, nests at most MAX_DEPTH deep and fits
    ``model``; else a 400 naming the first offending parameter."""
    try:
        body = orjson.loads(raw)
    except orjson.JSONDecodeError:
        raise RequestError("We could not parse the JSON body of your request.") from None
    if not isinstance(body, dict):
        raise RequestError("The request body must be a JSON object.")
    _check_depth(body)
    try:
        model.model_validate(body)
    except ValidationError as exc:
        first = exc.errors(include_url=False, include_input=False)[0]
        param = _param(first["loc"])
        raise RequestError(f"Invalid '{param}': {first['msg']}.", param or None) from None
    return body


def _param(location: tuple[int | str, ...]) -> str:
    param = ""
    for part in location:
        if isinstance(part, int):
            param += f"[{part}]"
        elif part not in _UNION_MEMBERS and "[" not in part and not part[:1].isupper():
            # pydantic names the union member it tried (str, list[...], a model's class);
            # OpenAI's param is only the field path.
            param += f".{part}" if param else part
    return param


def _check_depth(body: dict[str, Any]) -> None:
    stack: list[tuple[Any, int]] = [(body, 1)]
    while stack:
        node, depth = stack.pop()
        children = node.values() if isinstance(node, dict) else node
        if depth > MAX_DEPTH:
            raise RequestError(f"The request nests deeper than {MAX_DEPTH} levels.")
        stack.extend((c, depth + 1) for c in children if isinstance(c, dict | list))
