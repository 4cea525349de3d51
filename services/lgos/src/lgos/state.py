"""What the app keeps per process: the compiled graphs and the settings they are served with."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Any

from fastapi import Depends, Request

from lgos.config import GraphRegistry
from lgos.errors import InvalidRequestError, ModelNotFoundError
from lgos.interrupts.keys import ScopeResolver, shared_scope
from lgos.interrupts.resources import InterruptResources
from lgos.runtime.runner import GraphRunner
from lgos.settings import LGOSSettings


@dataclass
class AppState:
    registry: GraphRegistry
    runners: dict[str, GraphRunner]
    settings: LGOSSettings
    scope_resolver: ScopeResolver = shared_scope
    interrupts: InterruptResources = field(init=False)

    def __post_init__(self) -> None:
        self.interrupts = InterruptResources(self.settings)

    def runner_for(self, model: Any) -> GraphRunner:
        if model is None:
            raise InvalidRequestError(
                "Missing required parameter: 'model'.",
                param="model",
                code="missing_required_parameter",
            )
        if not isinstance(model, str):
            raise InvalidRequestError("Invalid type for 'model': expected a string.", param="model")
        runner = self.runners.get(model)
        if runner is None:
            raise ModelNotFoundError(model)
        return runner


async def get_state(request: Request) -> AppState:
    # async on purpose: FastAPI runs sync dependencies in a worker thread, a hop per request.
    state: AppState = request.app.state.lgos
    return state


StateDep = Annotated[AppState, Depends(get_state)]
