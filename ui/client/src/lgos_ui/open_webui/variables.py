"""A graph's settings as Open WebUI chat variables, declared by the graph's model entry."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from lgos_ui.catalog import GraphEntry
from lgos_ui.settings import coerce, setting_fields


def variables_prompt(entry: GraphEntry) -> str:
    """The system prompt that declares each setting as an Open WebUI chat variable.

    Open WebUI renders these as a form per chat and hands the values to the pipe as
    ``chat_variables``; the pipe drops the system message itself, so nothing reaches the graph
    as prompt text.
    """
    lines = []
    for setting in setting_fields(entry.settings_schema, entry.settings_defaults):
        label = setting.label.replace(":", " ")
        if setting.kind == "select":
            options = json.dumps([str(o) for o in setting.options])
            spec = f"select:options={options}:default={setting.default}"
        elif setting.kind == "switch":
            spec = "checkbox" + (":default=true" if setting.default else "")
        elif setting.kind in ("number", "integer"):
            spec = "number"
            if setting.minimum is not None:
                spec += f":min={setting.minimum}"
            if setting.maximum is not None:
                spec += f":max={setting.maximum}"
            if setting.default is not None:
                spec += f":default={setting.default}"
        else:
            spec = "text" + (f":default={setting.default}" if setting.default else "")
        lines.append(f"{label}: {{{{chat.variables.{setting.id} | {spec}:label={label}}}}}")
    return "\n".join(lines)


HINT_CHARS = 48


def suggestion_prompts(entry: GraphEntry) -> list[dict[str, Any]]:
    """The graph's example prompts as the model entry's ``meta.suggestion_prompts`` (Open WebUI
    shows ``title`` as two lines, bold then grey, and sends ``content``)."""
    prompts = []
    for example in entry.examples:
        hint = example.prompt
        if len(hint) > HINT_CHARS:
            hint = hint[: HINT_CHARS - 1].rstrip() + "…"
        prompts.append({"title": [example.label, hint], "content": example.prompt})
    return prompts


def settings_values(entry: GraphEntry, chat_variables: Any) -> dict[str, Any]:
    """The graph's settings from Open WebUI's chat variables, in the schema's types."""
    values: dict[str, Any] = {}
    given = chat_variables if isinstance(chat_variables, Mapping) else {}
    for setting in setting_fields(entry.settings_schema, entry.settings_defaults):
        raw = given.get(setting.id)
        if raw is None or raw == "":
            continue
        if setting.kind == "switch" and isinstance(raw, str):
            raw = raw.strip().lower() in ("true", "1", "yes", "on")
        values[setting.id] = coerce(setting, raw)
    return values
