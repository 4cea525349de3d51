"""Tool declarations and ``tool_choice``, normalized the same way for both protocols."""

from __future__ import annotations

from typing import Any

from lgos.config import GraphConfig
from lgos.errors import InvalidRequestError
from lgos.protocol.schema import FunctionTool
from lgos.protocol.validation import reject_unknown

WEB_SEARCH = "web_search"
_FUNCTION_FIELDS = frozenset(FunctionTool.model_fields)
_CHOICE_MODES = ("none", "auto", "required")


def tool_array(raw: Any) -> list[Any]:
    """The request's ``tools`` array; none when absent."""
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise InvalidRequestError("Invalid type for 'tools': expected an array.", param="tools")
    return raw


def check_unique_names(functions: list[dict[str, Any]]) -> None:
    names = [f["name"] for f in functions]
    if len(set(names)) != len(names):
        raise InvalidRequestError("Function names must be unique.", param="tools")


def function_tool(spec: Any, param: str, config: GraphConfig) -> dict[str, Any]:
    """A flat ``{"type": "function", "name", ...}`` function; it must not shadow a server tool."""
    if not isinstance(spec, dict):
        raise InvalidRequestError(f"Invalid '{param}': expected an object.", param=param)
    reject_unknown(spec, _FUNCTION_FIELDS, param)
    name = spec.get("name")
    if not isinstance(name, str) or not name:
        raise InvalidRequestError(
            f"'{param}.name' must be a non-empty string.", param=f"{param}.name"
        )
    if name in config.server_tools:
        raise InvalidRequestError(
            f"Function '{name}' collides with a server tool of this model; select it as a tool "
            "of type 'custom' instead.",
            param=f"{param}.name",
        )
    parameters = spec.get("parameters")
    if parameters is not None and not isinstance(parameters, dict):
        raise InvalidRequestError(
            f"'{param}.parameters' must be a JSON Schema object.", param=f"{param}.parameters"
        )
    description = spec.get("description")
    if description is not None and not isinstance(description, str):
        raise InvalidRequestError(
            f"'{param}.description' must be a string.", param=f"{param}.description"
        )
    strict = spec.get("strict")
    if strict is not None and not isinstance(strict, bool):
        raise InvalidRequestError(f"'{param}.strict' must be a boolean.", param=f"{param}.strict")
    return {
        "type": "function",
        "name": name,
        "description": description,
        "parameters": parameters
        if parameters is not None
        else {"type": "object", "properties": {}},
        "strict": strict,
    }


def server_tool_selector(spec: dict[str, Any], param: str, config: GraphConfig) -> str:
    """A ``custom`` selector names a registered server tool and carries nothing else."""
    kind = spec.get("type")
    if kind == WEB_SEARCH:
        if set(spec) != {"type"}:
            raise InvalidRequestError(
                "web_search selectors take no options; the graph owns its search backend.",
                param=param,
            )
        if WEB_SEARCH not in config.server_tools:
            raise InvalidRequestError(
                "This model does not offer the web_search tool.", param=f"{param}.type"
            )
        return WEB_SEARCH
    name = spec.get("name")
    if not isinstance(name, str) or name not in config.server_tools or name == WEB_SEARCH:
        raise InvalidRequestError(
            f"Custom tool {name!r} is not a server tool of this model; LGOS does not run "
            "client-defined custom tools.",
            param=f"{param}.name",
        )
    if set(spec) != {"type", "name"}:
        raise InvalidRequestError(
            f"Server tool '{name}' is owned by the graph: send only type and name.", param=param
        )
    return name


def tool_choice(
    choice: Any, param: str, functions: list[dict[str, Any]], server_tools: list[str]
) -> Any:
    """``none``/``auto``/``required`` or a named function/custom choice among offered tools."""
    if choice is None or choice in _CHOICE_MODES:
        return choice
    if not isinstance(choice, dict):
        raise InvalidRequestError(
            f"'{param}' must be 'none', 'auto', 'required' or a named function or custom tool.",
            param=param,
        )
    kind = choice.get("type")
    if kind not in ("function", "custom"):
        raise InvalidRequestError(
            f"tool_choice type {kind!r} is not supported; name a function or custom tool, or use "
            "'required'.",
            param=param,
        )
    name = choice.get("name")
    offered = {f["name"] for f in functions} if kind == "function" else set(server_tools)
    if name not in offered:
        raise InvalidRequestError(
            f"tool_choice names {kind} {name!r}, which is not among the request's tools.",
            param=param,
        )
    return {"type": kind, "name": name}
