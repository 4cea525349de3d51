from __future__ import annotations

import pytest
from lgos import ClientSettings, GraphConfig, GraphExample, GraphFeature, GraphRegistry
from lgos.config import validate_model_id
from pydantic import Field


def _graph() -> None:  # never built in these tests
    raise AssertionError


@pytest.mark.parametrize("name", ["", " ", "a/b", " padded", "lgos/simple"])
def test_invalid_model_ids(name: str) -> None:
    with pytest.raises(ValueError, match="model id"):
        validate_model_id(name)


def test_registry_rejects_duplicates_and_bad_ids() -> None:
    config = GraphConfig(graph=_graph, description="d")  # type: ignore[arg-type]
    registry = GraphRegistry.of({"one": config})
    with pytest.raises(ValueError, match="already registered"):
        registry.register("one", config)
    with pytest.raises(ValueError):
        registry.register("a/b", config)
    assert list(registry) == ["one"]


def test_description_is_required() -> None:
    with pytest.raises(ValueError, match="description"):
        GraphConfig(graph=_graph, description="  ")  # type: ignore[arg-type]


def test_settings_need_defaults() -> None:
    class NoDefault(ClientSettings):
        level: int

    with pytest.raises(ValueError, match="default"):
        GraphConfig(graph=_graph, description="d", client_settings=NoDefault)  # type: ignore[arg-type]


def test_tool_lists_must_not_overlap() -> None:
    with pytest.raises(ValueError, match="both"):
        GraphConfig(
            graph=_graph,  # type: ignore[arg-type]
            description="d",
            server_tools=["x"],
            client_tools=["x"],
        )


def test_features_are_normalized() -> None:
    config = GraphConfig(
        graph=_graph,
        description="d",
        features=frozenset({"background"}),  # type: ignore[arg-type]
    )
    assert config.features == {GraphFeature.BACKGROUND}


def test_settings_schema_and_defaults() -> None:
    class Settings(ClientSettings):
        depth: int = Field(default=2, ge=1)

    config = GraphConfig(graph=_graph, description="d", client_settings=Settings)  # type: ignore[arg-type]
    schema = config.settings_schema()
    assert schema["$schema"].endswith("2020-12/schema")
    assert schema["properties"]["depth"]["default"] == 2
    assert schema["additionalProperties"] is False
    assert config.settings_defaults() == {"depth": 2}


def test_examples_are_kept_in_order() -> None:
    examples = [GraphExample("Chat", "Say hello."), GraphExample("Save", "Remember: x.")]
    config = GraphConfig(graph=_graph, description="d", examples=examples)  # type: ignore[arg-type]
    assert config.examples == tuple(examples)  # a list is frozen to a tuple
    assert [e.to_json() for e in config.examples] == [
        {"label": "Chat", "prompt": "Say hello."},
        {"label": "Save", "prompt": "Remember: x."},
    ]
    # Several lines are allowed in a prompt, not in a label.
    assert GraphExample("Multi", "line one\nline two").prompt.count("\n") == 1


@pytest.mark.parametrize(
    ("label", "prompt", "match"),
    [
        ("", "p", "label must be non-empty"),
        ("  ", "p", "label must be non-empty"),
        ("l", "", "prompt must be non-empty"),
        (" padded", "p", "surrounding whitespace"),
        ("l", "p ", "surrounding whitespace"),
        ("x" * 61, "p", "at most 60"),
        ("l", "x" * 501, "at most 500"),
        ("two\nlines", "p", "one line"),
        ("l", "nul\x00byte", "control characters"),
        ("bell\x07", "p", "control characters"),
        ("l", "del\x7f", "control characters"),
        (3, "p", "label must be non-empty"),
    ],
)
def test_invalid_examples_are_refused_at_registration(
    label: object, prompt: str, match: str
) -> None:
    with pytest.raises(ValueError, match=match):
        GraphExample(label, prompt)  # type: ignore[arg-type]


def test_examples_collection_is_bounded_unique_and_typed() -> None:
    def config(examples: object) -> GraphConfig:
        return GraphConfig(graph=_graph, description="d", examples=examples)  # type: ignore[arg-type]

    with pytest.raises(ValueError, match="at most 8"):
        config([GraphExample(f"e{i}", "p") for i in range(9)])
    with pytest.raises(ValueError, match="unique"):
        config([GraphExample("same", "a"), GraphExample("same", "b")])
    with pytest.raises(ValueError, match="GraphExample"):
        config(["just a string"])
    with pytest.raises(ValueError, match="sequence of GraphExample"):
        config("Say hello.")
    assert len(config([GraphExample(f"e{i}", "p") for i in range(8)]).examples) == 8
