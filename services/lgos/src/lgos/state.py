"""What the app keeps per process: the compiled graphs and the settings they are served with."""

from __future__ import annotations

import asyncio
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from typing import Annotated, Any

from fastapi import Depends, Request

from lgos.background.backend import BackgroundBackend
from lgos.background.inprocess import InProcessBackend
from lgos.config import GraphRegistry
from lgos.errors import InvalidRequestError, ModelNotFoundError
from lgos.interrupts.keys import ScopeResolver, shared_scope
from lgos.interrupts.persistence import open_store
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
    _store_attached: bool = field(default=False, init=False)
    _store_lock: asyncio.Lock = field(default_factory=asyncio.Lock, init=False)
    _stack: AsyncExitStack = field(default_factory=AsyncExitStack, init=False)

    background: BackgroundBackend = field(default_factory=InProcessBackend, init=False)

    def __post_init__(self) -> None:
        self.interrupts = InterruptResources(self.settings)

    async def open(self) -> None:
        """Give every graph the shared Store (Postgres when configured); idempotent."""
        if self._store_attached:
            return
        async with self._store_lock:
            if self._store_attached:
                return
            store = await open_store(self._stack, self.settings.postgres_uri)
            for runner in self.runners.values():
                runner.attach_store(store)
            self._store_attached = True

    async def aclose(self) -> None:
        await self.background.close()
        await self.interrupts.aclose()
        await self._stack.aclose()
        self._store_attached = False

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
    await state.open()  # the lifespan opens it at start-up; in-process test clients skip that
    return state


StateDep = Annotated[AppState, Depends(get_state)]
