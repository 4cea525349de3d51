"""Expiry of abandoned paused runs: ``delete_expired_interrupt_runs`` and its schedule."""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from langgraph.checkpoint.base import BaseCheckpointSaver

if TYPE_CHECKING:
    from lgos.interrupts.resources import InterruptResources
    from lgos.settings import LGOSSettings

logger = logging.getLogger("lgos.interrupts")
THREAD_PREFIX = "lgos-run-"


async def delete_expired_interrupt_runs(
    saver: BaseCheckpointSaver[Any], ttl: timedelta, *, now: datetime | None = None
) -> list[str]:
    """Delete every LGOS run thread whose newest checkpoint is older than ``ttl``.

    Run the sweep with a TTL longer than the longest time a user may take to answer.
    """
    cutoff = (now or datetime.now(UTC)) - ttl
    newest: dict[str, datetime] = {}
    async for item in saver.alist(None):
        thread = str(item.config["configurable"].get("thread_id", ""))
        if not thread.startswith(THREAD_PREFIX):
            continue
        written = datetime.fromisoformat(item.checkpoint["ts"])
        if thread not in newest or written > newest[thread]:
            newest[thread] = written
    expired = [thread for thread, written in newest.items() if written < cutoff]
    for thread in expired:
        await saver.adelete_thread(thread)
    if expired:
        logger.info("swept expired interrupt runs", extra={"count": len(expired)})
    return expired


async def sweep_forever(resources: InterruptResources, settings: LGOSSettings) -> None:
    ttl = timedelta(seconds=settings.interrupt_ttl)
    while True:
        await asyncio.sleep(settings.sweep_interval)
        try:
            service = await resources.service()
            await delete_expired_interrupt_runs(service.saver, ttl)
        except Exception:
            logger.warning("interrupt expiry sweep failed", exc_info=True)
