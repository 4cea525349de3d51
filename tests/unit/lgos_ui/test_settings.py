from __future__ import annotations

import json

from lgos_ui.settings import (
    SettingField,
    coerce,
    encode_settings,
    request_metadata,
    setting_fields,
)

from tests.support.settings_schema import DEFAULTS, SCHEMA


def by_id() -> dict[str, SettingField]:
    return {f.id: f for f in setting_fields(SCHEMA, DEFAULTS)}


def test_schema_becomes_widgets_enum_select_boolean_switch_numbers_text() -> None:
    fields = by_id()
    assert fields["use_history"].kind == "switch" and fields["use_history"].label == "Use History"
    assert fields["audience"].kind == "select"
    assert fields["audience"].options == ("general", "beginner", "expert")
    assert fields["audience"].description == "Who the answer is written for."
    assert (fields["depth"].kind, fields["depth"].minimum, fields["depth"].maximum) == (
        "integer",
        1,
        5,
    )
    assert fields["temperature"].kind == "number"
    assert fields["tone"].kind == "select" and fields["tone"].options == ("plain", "warm")
    assert fields["signature"].kind == "text"
    assert "nested" not in fields  # not renderable: stays at its default


def test_defaults_object_wins_over_schema_annotations() -> None:
    fields = {f.id: f for f in setting_fields(SCHEMA, {**DEFAULTS, "audience": "expert"})}
    assert fields["audience"].default == "expert"


def test_widget_values_are_coerced_back_to_schema_types() -> None:
    fields = by_id()
    assert coerce(fields["depth"], "3") == 3
    assert coerce(fields["temperature"], "0.75") == 0.75
    assert coerce(fields["use_history"], 1) is True
    assert coerce(fields["audience"], "expert") == "expert"
    assert coerce(fields["depth"], None) == 2


def test_only_changed_values_are_sent_as_compact_json() -> None:
    assert encode_settings(DEFAULTS, DEFAULTS) is None
    encoded = encode_settings({**DEFAULTS, "audience": "expert", "depth": 3}, DEFAULTS)
    assert encoded is not None and json.loads(encoded) == {"audience": "expert", "depth": 3}
    assert " " not in encoded


def test_request_metadata_carries_conversation_and_settings() -> None:
    assert request_metadata(None) == {}
    metadata = request_metadata("thread-1", {"audience": "beginner"}, {"audience": "general"})
    assert metadata == {"conversation_id": "thread-1", "lgos_settings": '{"audience":"beginner"}'}
    assert len(request_metadata("x" * 500)["conversation_id"]) == 200
