"""A graph's settings fields (:class:`lgos_ui.SettingField`) as Chainlit chat-settings widgets."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from chainlit.input_widget import InputWidget, NumberInput, Select, Slider, Switch, TextInput
from lgos_ui import SettingField
from lgos_ui.settings import coerce


def widget(field: SettingField, value: Any) -> InputWidget:
    common: dict[str, Any] = {
        "id": field.id,
        "label": field.label,
        "description": field.description,
    }
    if field.kind == "select":
        return Select(values=[str(o) for o in field.options], initial_value=str(value), **common)
    if field.kind == "switch":
        return Switch(initial=bool(value), **common)
    if field.kind in ("number", "integer"):
        if field.minimum is not None and field.maximum is not None:
            step = 1 if field.kind == "integer" else (field.maximum - field.minimum) / 100
            return Slider(initial=value, min=field.minimum, max=field.maximum, step=step, **common)
        return NumberInput(initial=value, **common)
    return TextInput(initial="" if value is None else str(value), **common)


def widgets(fields: Sequence[SettingField], values: Mapping[str, Any]) -> list[InputWidget]:
    return [widget(f, values.get(f.id, f.default)) for f in fields]


def values_from(fields: Sequence[SettingField], submitted: Mapping[str, Any]) -> dict[str, Any]:
    """The submitted widget values in the schema's types (unknown keys dropped)."""
    return {f.id: coerce(f, submitted.get(f.id, f.default)) for f in fields}
