"""``GET /v1/models`` and ``GET /v1/models/{model}``: graphs as OpenAI models plus ``lgos``."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from lgos.config import GraphConfig
from lgos.protocol.json import JSONResponse
from lgos.state import StateDep

OWNED_BY = "langgraph-openai-serve"

router = APIRouter(tags=["models"])


def lgos_summary(config: GraphConfig) -> dict[str, Any]:
    return {
        "description": config.description,
        "features": sorted(feature.value for feature in config.features),
        "server_tools": sorted(config.server_tools),
        "client_tools": sorted(config.client_tools),
        "examples": [example.to_json() for example in config.examples],
    }


def lgos_detail(config: GraphConfig) -> dict[str, Any]:
    return {
        **lgos_summary(config),
        "client_settings": {
            "json_schema": config.settings_schema(),
            "defaults": config.settings_defaults(),
        },
    }


def model_object(name: str, created: int, lgos: dict[str, Any]) -> dict[str, Any]:
    return {"id": name, "object": "model", "created": created, "owned_by": OWNED_BY, "lgos": lgos}


@router.get("/v1/models")
async def list_models(state: StateDep) -> JSONResponse:
    created = state.registry.created
    data = [
        model_object(name, created, lgos_summary(config)) for name, config in state.registry.items()
    ]
    return JSONResponse({"object": "list", "data": data})


@router.get("/v1/models/{model:path}")
async def retrieve_model(model: str, state: StateDep) -> JSONResponse:
    runner = state.runner_for(model)
    return JSONResponse(model_object(model, state.registry.created, lgos_detail(runner.config)))
