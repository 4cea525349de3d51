"""A graph's ``client_settings``: form fields from its JSON Schema, and the request encoding.

Settings travel as ``metadata.lgos_settings``: a JSON string of only the values that differ from
the advertised ``defaults`` (LGOS shallow-merges them and stays the validation authority).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

FieldKind = Literal["select", "switch", "number", "integer", "text"]
"""How a UI renders one setting: enum → select, boolean → switch, number/integer, string."""

SETTINGS_KEY = "lgos_settings"
CONVERSATION_KEY = "conversation_id"


@dataclass(frozen=True, slots=True)
class SettingField:
    id: str
    kind: FieldKind
    label: str
    description: str
    default: Any
    options: tuple[Any, ...] = ()
    minimum: float | None = None
    maximum: float | None = None


def _resolve(schema: Mapping[str, Any], node: Mapping[str, Any]) -> Mapping[str, Any]:
    """Follow a local ``$ref`` (pydantic puts enums of nested models in ``$defs``)."""
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        target = schema.get("$defs", {}).get(ref.rsplit("/", 1)[1])
        if isinstance(target, Mapping):
            return {**target, **{k: v for k, v in node.items() if k != "$ref"}}
    for key in ("anyOf", "oneOf", "allOf"):
        variants = node.get(key)
        if isinstance(variants, list):
            # Optional[X] is anyOf [X, null]: render X.
            real = [v for v in variants if isinstance(v, Mapping) and v.get("type") != "null"]
            if len(real) == 1:
                return {**_resolve(schema, real[0]), **{k: v for k, v in node.items() if k != key}}
    return node


def _label(name: str, node: Mapping[str, Any]) -> str:
    title = node.get("title")
    return title if isinstance(title, str) and title else name.replace("_", " ").capitalize()


def setting_fields(
    schema: Mapping[str, Any], defaults: Mapping[str, Any] | None = None
) -> list[SettingField]:
    """One field per top-level property the UI can render; others are left to the defaults."""
    defaults = defaults or {}
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        return []
    fields: list[SettingField] = []
    for name, raw in properties.items():
        if not isinstance(raw, Mapping):
            continue
        node = _resolve(schema, raw)
        default = defaults.get(name, node.get("default"))
        description = node.get("description")
        common = {
            "id": name,
            "label": _label(name, raw),
            "description": description if isinstance(description, str) else "",
            "default": default,
        }
        kind = node.get("type")
        if isinstance(node.get("enum"), list):
            fields.append(SettingField(kind="select", options=tuple(node["enum"]), **common))
        elif "const" in node:
            fields.append(SettingField(kind="select", options=(node["const"],), **common))
        elif kind == "boolean":
            fields.append(SettingField(kind="switch", **common))
        elif kind in ("number", "integer"):
            fields.append(
                SettingField(
                    kind="integer" if kind == "integer" else "number",
                    minimum=node.get("minimum"),
                    maximum=node.get("maximum"),
                    **common,
                )
            )
        elif kind == "string":
            fields.append(SettingField(kind="text", **common))
    return fields


def coerce(field: SettingField, value: Any) -> Any:
    """A UI widget's value in the schema's type (text inputs hand back strings)."""
    if value is None:
        return field.default
    if field.kind == "integer":
        try:
            return int(value)
        except (TypeError, ValueError):
            return value
    if field.kind == "number":
        try:
            number = float(value)
        except (TypeError, ValueError):
            return value
        return int(number) if number.is_integer() and isinstance(field.default, int) else number
    if field.kind == "switch":
        return bool(value)
    if field.kind == "select":
        # Select widgets hand back strings: map back to the option it names.
        for option in field.options:
            if value == option or str(value) == str(option):
                return option
    return value


def changed_settings(values: Mapping[str, Any], defaults: Mapping[str, Any]) -> dict[str, Any]:
    """Only the values that differ from the advertised defaults."""
    return {k: v for k, v in values.items() if k not in defaults or defaults[k] != v}


def encode_settings(values: Mapping[str, Any], defaults: Mapping[str, Any]) -> str | None:
    """The ``metadata.lgos_settings`` string, or ``None`` when everything is at its default."""
    changed = changed_settings(values, defaults)
    if not changed:
        return None
    return json.dumps(changed, separators=(",", ":"), sort_keys=True)


def request_metadata(
    conversation_id: str | None,
    values: Mapping[str, Any] | None = None,
    defaults: Mapping[str, Any] | None = None,
) -> dict[str, str]:
    """Request ``metadata``: the conversation correlation id and the encoded settings."""
    metadata: dict[str, str] = {}
    if conversation_id:
        metadata[CONVERSATION_KEY] = conversation_id[:200]
    encoded = encode_settings(values or {}, defaults or {})
    if encoded is not None:
        metadata[SETTINGS_KEY] = encoded
    return metadata
