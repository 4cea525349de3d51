from __future__ import annotations

import json
from typing import Any, Literal

import pytest
from lgos import ClientSettings, GraphConfig, InvalidRequestError
from lgos.protocol.metadata import check_metadata, resolve_metadata, resolve_settings


class Settings(ClientSettings):
    mode: str = "a"
    nested: dict[str, int] = {"x": 1}


CONFIG = GraphConfig(graph=lambda: None, description="d", client_settings=Settings)  # type: ignore[arg-type,return-value]
PLAIN = GraphConfig(graph=lambda: None, description="d")  # type: ignore[arg-type,return-value]


def test_missing_settings_give_defaults() -> None:
    assert resolve_settings(CONFIG, None) == Settings()
    assert resolve_settings(PLAIN, None) is None


def test_shallow_merge_replaces_nested_objects() -> None:
    settings = resolve_settings(CONFIG, json.dumps({"nested": {"y": 2}}))
    assert settings == Settings(mode="a", nested={"y": 2})


@pytest.mark.parametrize("raw", ["{", "[]", "1", json.dumps({"mode": 3}), json.dumps({"x": 1})])
def test_bad_settings(raw: str) -> None:
    with pytest.raises(InvalidRequestError) as caught:
        resolve_settings(CONFIG, raw)
    assert caught.value.param == "metadata.lgos_settings"


def test_settings_for_a_graph_without_settings() -> None:
    assert resolve_settings(PLAIN, "{}") is None
    with pytest.raises(InvalidRequestError):
        resolve_settings(PLAIN, json.dumps({"a": 1}))


def test_reserved_prefix_and_passthrough() -> None:
    resolved = resolve_metadata(
        CONFIG, check_metadata({"conversation_id": "c", "k": "v", "lgos_settings": "{}"})
    )
    assert resolved.passthrough == {"conversation_id": "c", "k": "v"}
    assert resolved.conversation_id == "c"
    with pytest.raises(InvalidRequestError) as caught:
        check_metadata({"lgos_future": "x"})
    assert caught.value.param == "metadata.lgos_future"


@pytest.mark.parametrize("metadata", [{"k": 1}, ["k"], {f"{i}": "v" for i in range(17)}])
def test_metadata_shape(metadata: object) -> None:
    with pytest.raises(InvalidRequestError):
        check_metadata(metadata)


class Typed(ClientSettings):
    flag: bool = False
    count: int = 1
    ratio: float = 0.5
    audience: Literal["general", "expert"] = "general"


TYPED = GraphConfig(graph=lambda: None, description="d", client_settings=Typed)  # type: ignore[arg-type,return-value]


@pytest.mark.parametrize(
    "supplied",
    [
        {"flag": "yes"},
        {"flag": "true"},
        {"flag": 1},
        {"count": "1"},
        {"count": 1.5},
        {"count": True},
        {"ratio": "0.5"},
        {"audience": "novice"},
    ],
)
def test_settings_are_validated_strictly_against_the_schema(supplied: dict[str, Any]) -> None:
    with pytest.raises(InvalidRequestError) as caught:
        resolve_settings(TYPED, json.dumps(supplied))
    assert caught.value.param == "metadata.lgos_settings"


def test_strict_settings_accept_what_the_schema_advertises() -> None:
    settings = resolve_settings(
        TYPED, json.dumps({"flag": True, "count": 3, "ratio": 2, "audience": "expert"})
    )
    assert settings == Typed(flag=True, count=3, ratio=2.0, audience="expert")
