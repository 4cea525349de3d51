"""Request-body checks shared by both protocols: JSON parsing, field allowlists, pydantic errors."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any, TypeVar

import orjson
from pydantic import BaseModel, ConfigDict, TypeAdapter, ValidationError

from lgos.errors import InvalidRequestError

T = TypeVar("T")

GENERATION_CONTROL = "Graphs own their model configuration; LGOS cannot apply it to a workflow."


class StrictModel(BaseModel):
    """Wire models reject fields they do not declare."""

    model_config = ConfigDict(extra="forbid")


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


def invalid_from(exc: ValidationError, prefix: str = "") -> InvalidRequestError:
    error = exc.errors(include_url=False, include_input=False)[0]
    # Tagged-union and literal branches add their own names to ``loc``; keep the wire path.
    location = [p for p in error["loc"] if isinstance(p, int) or not _is_branch(p)]
    param = format_param(location, prefix)
    message = str(error["msg"])
    if error["type"] == "extra_forbidden":
        message = f"Unknown parameter: '{param}'."
        return InvalidRequestError(message, param=param, code="unknown_parameter")
    return InvalidRequestError(
        f"Invalid '{param}': {message}." if param else message, param=param or None
    )


def _is_branch(part: str) -> bool:
    return part.startswith(("function-", "tagged-union", "literal[")) or part in _BRANCHES


_BRANCHES = frozenset({"str", "list[...]", "dict[str,any]", "list[dict[str,any]]", "bool", "none"})


def validate_as(adapter: TypeAdapter[T], value: Any, prefix: str) -> T:
    try:
        return adapter.validate_python(value)
    except ValidationError as exc:
        raise invalid_from(exc, prefix) from None


def validate_model(model: type[BaseModel], body: dict[str, Any]) -> Any:
    try:
        return model.model_validate(body)
    except ValidationError as exc:
        raise invalid_from(exc) from None
