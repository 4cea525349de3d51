"""GET /v1/models and /v1/models/{model} through the official SDK."""

from __future__ import annotations

import openai
import pytest
from openai import AsyncOpenAI


async def test_list_models_is_light_and_standard(client: AsyncOpenAI) -> None:
    page = await client.models.list()
    models = {m.id: m for m in page.data}
    assert {"simple-graph", "status-events", "response-outcomes"} <= models.keys()
    simple = models["simple-graph"]
    assert simple.object == "model"
    assert simple.owned_by == "langgraph-openai-serve"
    assert isinstance(simple.created, int)
    lgos = simple.model_extra["lgos"]
    assert lgos == {
        "description": "Streams responses with configurable history and audience.",
        "features": ["mcp_tools"],
        "server_tools": [],
        "client_tools": [],
        "examples": [],
    }
    # Tools are advertised sorted, by name only.
    echo = models["echo-request"].model_extra["lgos"]
    assert echo["server_tools"] == ["package_version", "web_search"]
    assert echo["client_tools"] == ["display_file"]
    assert models["interrupts"].model_extra["lgos"]["features"] == ["interrupts"]
    assert models["status-events"].model_extra["lgos"]["features"] == ["client_events"]


async def test_retrieve_model_has_complete_extension(client: AsyncOpenAI) -> None:
    model = await client.models.retrieve("simple-graph")
    lgos = model.model_extra["lgos"]
    settings = lgos["client_settings"]
    assert settings["defaults"] == {"use_history": False, "audience": "general"}
    schema = settings["json_schema"]
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["additionalProperties"] is False
    assert schema["properties"]["audience"]["enum"] == ["general", "beginner", "expert"]
    assert schema["properties"]["use_history"]["type"] == "boolean"


async def test_retrieve_model_without_settings_still_has_extension(client: AsyncOpenAI) -> None:
    lgos = (await client.models.retrieve("scripted")).model_extra["lgos"]
    assert lgos["features"] == [] and lgos["server_tools"] == [] and lgos["client_tools"] == []
    assert lgos["client_settings"]["defaults"] == {}
    assert lgos["client_settings"]["json_schema"]["properties"] == {}


async def test_unknown_model_is_404_model_not_found(client: AsyncOpenAI) -> None:
    with pytest.raises(openai.NotFoundError) as caught:
        await client.models.retrieve("missing")
    assert caught.value.status_code == 404
    assert caught.value.code == "model_not_found"
    assert caught.value.param == "model"
    assert caught.value.body["message"] == "The model 'missing' does not exist."
