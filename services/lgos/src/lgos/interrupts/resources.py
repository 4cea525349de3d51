"""The interrupt machinery of one process, opened on first use and closed with the app."""

from __future__ import annotations

import asyncio
from contextlib import AsyncExitStack

from lgos.interrupts.coordinator import InProcessCoordinator, RunCoordinator
from lgos.interrupts.persistence import open_saver
from lgos.interrupts.runs import InterruptService
from lgos.settings import LGOSSettings
from lgos.storage import PostgresLimits


class InterruptResources:
    def __init__(self, settings: LGOSSettings) -> None:
        self.settings = settings
        self._service: InterruptService | None = None
        self._stack = AsyncExitStack()
        self._lock = asyncio.Lock()

    async def service(self) -> InterruptService:
        if self._service is None:
            async with self._lock:
                if self._service is None:
                    self._service = await self._open()
        return self._service

    async def _open(self) -> InterruptService:
        saver = await open_saver(
            self._stack,
            self.settings.postgres_uri,
            self.settings.state_dir,
            PostgresLimits.from_settings(self.settings),
        )
        coordinator: RunCoordinator
        if self.settings.redis_url:
            from lgos.interrupts.redis_coordinator import RedisCoordinator

            coordinator = RedisCoordinator(
                self.settings.redis_url,
                ttl=self.settings.lease_ttl,
                timeout=self.settings.redis_timeout,
            )
        else:
            coordinator = InProcessCoordinator(ttl=self.settings.lease_ttl)
        self._stack.push_async_callback(coordinator.close)
        return InterruptService(saver, coordinator, renew_every=self.settings.lease_ttl / 3)

    async def aclose(self) -> None:
        await self._stack.aclose()
        self._service = None
