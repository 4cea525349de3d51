"""Sample catalog data the lgos_ui and Open WebUI pipe tests share."""

from __future__ import annotations

from typing import Any

# What LGOS advertises for simple-graph (pydantic's schema of its ClientSettings).
SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "use_history": {"type": "boolean", "default": False, "title": "Use History"},
        "audience": {
            "type": "string",
            "enum": ["general", "beginner", "expert"],
            "default": "general",
            "description": "Who the answer is written for.",
        },
        "depth": {"type": "integer", "minimum": 1, "maximum": 5, "default": 2},
        "temperature": {"type": "number", "default": 0.5},
        "tone": {"anyOf": [{"$ref": "#/$defs/Tone"}, {"type": "null"}], "default": None},
        "signature": {"type": "string", "default": ""},
        "nested": {"type": "object", "default": {}},
    },
    "$defs": {"Tone": {"enum": ["plain", "warm"], "type": "string"}},
}
DEFAULTS = {
    "use_history": False,
    "audience": "general",
    "depth": 2,
    "temperature": 0.5,
    "tone": None,
    "signature": "",
    "nested": {},
}
