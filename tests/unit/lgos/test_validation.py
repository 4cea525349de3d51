from __future__ import annotations

import pytest
from lgos import InvalidRequestError
from lgos.protocol.validation import check_fields, format_param, parse_json_body


def test_format_param() -> None:
    assert format_param(["input", 0, "content", 2, "type"]) == "input[0].content[2].type"
    assert format_param([0, "x"], "messages") == "messages[0].x"


def test_check_fields_drops_null_unsupported_and_rejects_the_rest() -> None:
    body = {"model": "m", "temperature": None}
    check_fields(body, allowed=frozenset({"model"}), unsupported={"temperature": "why"})
    assert body == {"model": "m"}
    with pytest.raises(InvalidRequestError) as caught:
        check_fields({"temperature": 1}, allowed=frozenset(), unsupported={"temperature": "why"})
    assert (caught.value.param, caught.value.code) == ("temperature", "unsupported_parameter")
    with pytest.raises(InvalidRequestError) as unknown:
        check_fields({"nope": 1}, allowed=frozenset(), unsupported={})
    assert unknown.value.code == "unknown_parameter"


@pytest.mark.parametrize("raw", [b"", b"[1]", b"{", b'"s"'])
def test_bad_bodies(raw: bytes) -> None:
    with pytest.raises(InvalidRequestError):
        parse_json_body(raw)
