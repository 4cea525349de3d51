from __future__ import annotations

import pytest
from lgos import ClientSettings, GraphConfig, GraphFeature, GraphRegistry
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
