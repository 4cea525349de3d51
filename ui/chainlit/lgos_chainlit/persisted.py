"""A step's last state written to Chainlit's data layer after every write before it.

Chainlit persists each step send and update in a task of its own, with nothing ordering them
(its PostgreSQL layer upserts the whole row). A step created and finished within milliseconds
(the deterministic stand-in model answers that fast) could have its creation land last, and a
reloaded thread then showed the finished commentary as still running. The final state is written
once more, after the data-layer writes pending at that moment.
"""

from __future__ import annotations

import asyncio
import logging

import chainlit as cl
from chainlit.data import get_data_layer

WRITES = frozenset({"create_step", "update_step"})
SETTLE_TIMEOUT = 10.0
"""Seconds to wait for the earlier writes; past it the final state is written anyway."""

log = logging.getLogger(__name__)


def _is_step_write(task: asyncio.Task[object]) -> bool:
    name = str(getattr(task.get_coro(), "__qualname__", ""))
    return name.rsplit(".", 1)[-1] in WRITES


async def persist_last(step: cl.Step) -> None:
    data_layer = get_data_layer()
    if data_layer is None:
        return
    current = asyncio.current_task()
    pending = [t for t in asyncio.all_tasks() if t is not current and _is_step_write(t)]
    if pending:
        await asyncio.wait(pending, timeout=SETTLE_TIMEOUT)
    try:
        await data_layer.update_step(step.to_dict())
    except Exception as error:  # the turn is shown already; a lost write must not break it
        log.warning("could not store the final state of step %s: %s", step.id, type(error).__name__)
