"""What the app keeps per process: the compiled graphs and the settings they are served with."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from typing import Annotated

from fastapi import Depends, Request

from lgos.background.backend import BackgroundBackend
from lgos.config import GraphRegistry
from lgos.errors import ModelNotFoundError
from lgos.interrupts.resources import InterruptResources
from lgos.runtime.runner import GraphRunner
from lgos.scope import ScopeResolver, shared_scope
from lgos.settings import LGOSSettings
from lgos.storage import PostgresLimits, open_store


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
    background_factory: Callable[[], Awaitable[BackgroundBackend]] | None = None
    """Opens the background engine with the rest; workers, which are one, leave it unset."""
    _background: BackgroundBackend | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        self.interrupts = InterruptResources(self.settings)

    @property
    def background(self) -> BackgroundBackend:
        if self._background is None:
            raise RuntimeError("the background engine is not open")
        return self._background

    async def open(self) -> None:
        """Give every graph the shared Store (Postgres when configured) and open the
        background engine; idempotent."""
        if self._store_attached:
            return
        async with self._store_lock:
            if self._store_attached:
                return
            store = await open_store(
                self._stack, self.settings.postgres_uri, PostgresLimits.from_settings(self.settings)
            )
            for runner in self.runners.values():
                runner.attach_store(store)
            if self.background_factory is not None:
                self._background = await self.background_factory()
            self._store_attached = True

    async def aclose(self) -> None:
        if self._background is not None:
            await self._background.close()
            self._background = None
        await self.interrupts.aclose()
        await self._stack.aclose()
        self._store_attached = False

    def runner_for(self, model: str) -> GraphRunner:
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
