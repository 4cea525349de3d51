from __future__ import annotations

from typing import Any

import pytest
from lgos import InvalidRequestError
from lgos.protocol.limits import check_shape, check_tree
from lgos.settings import LGOSSettings

LIMITS = LGOSSettings(max_input_items=3, max_tools=2, max_tool_schema_bytes=200, max_json_depth=5)


def nested(depth: int) -> Any:
    value: Any = "leaf"
    for _ in range(depth):
        value = {"a": [value]}
    return value


def test_depth_at_the_limit_passes_and_one_more_names_the_place() -> None:
    check_tree({"x": nested(2)}, 5)  # body, x, a, [..], a, [..]: 5 containers deep
    with pytest.raises(InvalidRequestError) as caught:
        check_tree({"x": {"y": nested(2)}}, 5)
    assert caught.value.param == "x.y.a[0].a"
    assert caught.value.code == "nesting_too_deep"


def test_depth_check_survives_what_recursion_would_not() -> None:
    with pytest.raises(InvalidRequestError):
        check_tree(nested(100_000), 64)


@pytest.mark.parametrize(
    ("body", "items", "param"),
    [
        ({"input": ["a"] * 4}, "input", "input"),
        ({"messages": [{}] * 4}, "messages", "messages"),
        ({"tools": [{}] * 3}, "input", "tools"),
        ({"tools": [{}, {"type": "function", "description": "x" * 300}]}, "input", "tools[1]"),
        ({"tools": [{"parameters": nested(3)}]}, "input", "tools[0].parameters.a[0]"),
    ],
)
def test_shape_bounds_name_the_parameter(body: dict[str, Any], items: str, param: str) -> None:
    with pytest.raises(InvalidRequestError) as caught:
        check_shape(body, LIMITS, items=items)
    assert caught.value.param == param
    assert caught.value.status_code == 400


def test_within_bounds_passes() -> None:
    check_shape({"input": ["a"] * 3, "tools": [{"type": "function"}] * 2}, LIMITS, items="input")
    check_shape({"input": "not a list", "tools": "not a list"}, LIMITS, items="input")


@pytest.mark.parametrize(
    ("body", "param"),
    [
        ({"input": "a\x00b"}, "input"),
        (
            {"input": [{"role": "user", "content": [{"type": "input_text", "text": "\x00"}]}]},
            "input[0].content[0].text",
        ),
        ({"metadata": {"k\x00": "v"}}, "metadata.k\\u0000"),
    ],
)
def test_nul_characters_are_refused_with_their_place(body: dict[str, Any], param: str) -> None:
    with pytest.raises(InvalidRequestError) as caught:
        check_shape(body, LIMITS, items="input")
    assert caught.value.param == param
    assert "\x00" not in caught.value.message
