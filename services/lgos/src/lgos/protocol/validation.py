"""Request-body checks shared by both protocols: JSON parsing, field allowlists, pydantic errors."""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping, Sequence
from typing import Any

import orjson

from lgos.errors import InvalidRequestError

GENERATION_CONTROL = "Graphs own their model configuration; LGOS cannot apply it to a workflow."


def parse_json_body(raw: bytes) -> dict[str, Any]:
    try:
        body = orjson.loads(raw)
    except orjson.JSONDecodeError:
        raise InvalidRequestError(
            "We could not parse the JSON body of your request. Send valid JSON."
        ) from None
    if not isinstance(body, dict):
        raise InvalidRequestError("The request body must be a JSON object.")
    return body


def require_model(body: Mapping[str, Any]) -> str:
    model = body.get("model")
    if model is None:
        raise InvalidRequestError(
            "Missing required parameter: 'model'.",
            param="model",
            code="missing_required_parameter",
        )
    if not isinstance(model, str):
        raise InvalidRequestError("Invalid type for 'model': expected a string.", param="model")
    return model


def check_fields(
    body: dict[str, Any], *, allowed: frozenset[str], unsupported: Mapping[str, str]
) -> None:
    """Reject unknown fields, and known-but-unsupported ones unless they are null."""
    for key in list(body):
        if key in allowed:
            continue
        if key in unsupported:
            if body[key] is None:
                del body[key]
                continue
            raise InvalidRequestError(
                f"Unsupported parameter: '{key}'. {unsupported[key]}",
                param=key,
                code="unsupported_parameter",
            )
        raise InvalidRequestError(
            f"Unrecognized request argument supplied: '{key}'.",
            param=key,
            code="unknown_parameter",
        )


def type_of(item: Any) -> Any:
    """An object's ``type`` field; ``None`` for anything that is not an object."""
    return item.get("type") if isinstance(item, dict) else None


def each_object(items: list[Any], name: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """``(param, item)`` for each element of the array ``name``; each must be an object."""
    for index, item in enumerate(items):
        param = f"{name}[{index}]"
        if not isinstance(item, dict):
            raise InvalidRequestError(f"Invalid '{param}': expected an object.", param=param)
        yield param, item


def reject_unknown(
    item: Mapping[str, Any],
    allowed: Collection[str],
    param: str,
    *,
    code: str = "unknown_parameter",
    label: str = "Unknown parameter",
) -> None:
    """400 naming the first field of ``item`` (an object at ``param``) outside ``allowed``."""
    unknown = set(item) - set(allowed)
    if unknown:
        field = sorted(unknown)[0]
        raise InvalidRequestError(
            f"{label}: '{param}.{field}'.", param=f"{param}.{field}", code=code
        )


def require_string(item: Mapping[str, Any], key: str, param: str) -> str:
    value = item.get(key)
    if not isinstance(value, str):
        raise InvalidRequestError(
            f"Invalid type for '{param}.{key}': expected a string.", param=f"{param}.{key}"
        )
    return value


def format_param(location: Sequence[int | str], prefix: str = "") -> str:
    """``("input", 0, "content")`` → ``input[0].content``, the way OpenAI names parameters."""
    param = prefix
    for part in location:
        if isinstance(part, int):
            param += f"[{part}]"
        else:
            param += f".{part}" if param else part
    return param


_TYPE_NAMES = {bool: "a boolean", str: "a string", list: "an array", dict: "an object"}


def optional_field(body: Mapping[str, Any], key: str, kind: type) -> Any:
    """``body[key]`` when present and of ``kind``; ``None`` when absent; else a 400."""
    value = body.get(key)
    if value is not None and not isinstance(value, kind):
        raise InvalidRequestError(
            f"Invalid type for '{key}': expected {_TYPE_NAMES[kind]}.",
            param=key,
            code="invalid_type",
        )
    return value
