"""Bounds on the shape of one request: they run on the parsed JSON before decoding, each a 400
naming the parameter. (Its size is bounded while it is read: ``service_kit.limits.BodyLimit``
with ``LGOS_MAX_REQUEST_BYTES``.)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import orjson

from lgos.errors import InvalidRequestError
from lgos.protocol.validation import format_param
from lgos.settings import LGOSSettings


def check_shape(body: dict[str, Any], limits: LGOSSettings, *, items: str) -> None:
    """Nesting depth and NUL-free strings of the whole body, then the ``items`` list's length
    and the tools'."""
    check_tree(body, limits.max_json_depth)
    listed = body.get(items)
    if isinstance(listed, list) and len(listed) > limits.max_input_items:
        raise InvalidRequestError(
            f"'{items}' may hold at most {limits.max_input_items} items; got {len(listed)}.",
            param=items,
            code="array_above_max_length",
        )
    tools = body.get("tools")
    if not isinstance(tools, list):
        return
    if len(tools) > limits.max_tools:
        raise InvalidRequestError(
            f"'tools' may hold at most {limits.max_tools} tools; got {len(tools)}.",
            param="tools",
            code="array_above_max_length",
        )
    for index, tool in enumerate(tools):
        if len(orjson.dumps(tool)) > limits.max_tool_schema_bytes:
            raise InvalidRequestError(
                f"'tools[{index}]' exceeds {limits.max_tool_schema_bytes} bytes of JSON.",
                param=f"tools[{index}]",
                code="tool_schema_too_large",
            )


def check_tree(value: Any, max_depth: int) -> None:
    """400 naming the first container nested deeper than ``max_depth``, or the first string
    (key or value) holding U+0000, which PostgreSQL text and jsonb cannot store: a checkpoint
    or background record would fail after the request was accepted. Iterative, so no hostile
    body can exhaust the recursion limit."""
    stack: list[tuple[Any, Sequence[int | str]]] = [(value, ())]
    while stack:
        node, path = stack.pop()
        if isinstance(node, str):
            if "\x00" in node:
                _reject_nul(path)
            continue
        if isinstance(node, dict):
            children: Any = node.items()
            for key in node:
                if "\x00" in key:
                    _reject_nul((*path, key))
        elif isinstance(node, list):
            children = enumerate(node)
        else:
            continue
        if len(path) >= max_depth:
            param = format_param(path) or None
            raise InvalidRequestError(
                f"The request nests objects and arrays deeper than {max_depth} levels"
                + (f" at '{param}'." if param else "."),
                param=param,
                code="nesting_too_deep",
            )
        stack.extend((child, (*path, key)) for key, child in children)


def _reject_nul(path: Sequence[int | str]) -> None:
    # The param names the place without carrying the NUL itself into the response.
    shown = [p.replace("\x00", "\\u0000") if isinstance(p, str) else p for p in path]
    param = format_param(shown) or None
    raise InvalidRequestError(
        "Strings may not contain the NUL character (U+0000)" + (f": '{param}'." if param else "."),
        param=param,
        code="invalid_value",
    )
