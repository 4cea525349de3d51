"""Open the background engine the settings select."""

from __future__ import annotations

from lgos.background.backend import BackgroundBackend, JobExecutor
from lgos.background.inprocess import InProcessBackend
from lgos.settings import LGOSSettings


async def open_backend(settings: LGOSSettings, executor: JobExecutor) -> BackgroundBackend:
    if settings.background == "distributed":
        from lgos.background.distributed import DistributedBackend

        return await DistributedBackend.open(settings)
    return InProcessBackend(
        executor,
        idempotency_ttl=settings.idempotency_ttl,
        retention=settings.background_retention,
    )
