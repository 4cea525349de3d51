"""Background runs in the thread: one progress message with a Cancel button, polled in a task
of its own, then the report as the answer."""

from __future__ import annotations

import asyncio

import chainlit as cl
from lgos_ui import Finished
from lgos_ui.events import answer_text, citations_of
from lgos_ui.ledger import Item
from lgos_ui.turn import (
    BackgroundFinished,
    BackgroundProgress,
    BackgroundRun,
    Turn,
    TurnError,
    cancel_background,
)
from openai import AsyncOpenAI

from lgos_chainlit.view import Progress, finish_answer

CANCEL_ACTION = "lgos_cancel"
ENDED = {"completed": "Background run completed.", "cancelled": "Background run cancelled."}
POLLERS: dict[str, asyncio.Task[None]] = {}


async def start_background(turn: Turn, input_items: list[Item]) -> None:
    async for event in turn.start_background(input_items):
        if isinstance(event, TurnError):
            await cl.Message(content=event.text).send()
        elif isinstance(event, BackgroundRun):
            watch_background(turn, event.response_id)


def watch_background(turn: Turn, response_id: str) -> None:
    """Poll in a task of its own: the chat stays usable, so its Cancel button can be clicked
    (Chainlit disables actions while a message handler runs). One poller per run."""
    if response_id in POLLERS:
        return
    task = asyncio.create_task(poll_background(turn, response_id))
    POLLERS[response_id] = task
    task.add_done_callback(lambda _: POLLERS.pop(response_id, None))


async def poll_background(turn: Turn, response_id: str) -> None:
    progress = cl.Message(
        content="Background run queued…",
        actions=[
            cl.Action(name=CANCEL_ACTION, payload={"response_id": response_id}, label="Cancel")
        ],
    )
    await progress.send()
    lines = Progress()
    result: Finished | None = None
    async for event in turn.poll_background(response_id):
        if isinstance(event, BackgroundProgress):
            for note in event.new:
                await lines.add(note)
            if not event.terminal:
                latest = f" — {event.notes[-1]}" if event.notes else ""
                progress.content = f"Background run {event.status} ({event.elapsed} s){latest}"
                await progress.update()
        elif isinstance(event, TurnError):
            progress.content = event.text
        elif isinstance(event, BackgroundFinished):
            result = event.result
            progress.content = ENDED.get(result.outcome, f"Background run {result.outcome}.")
    await lines.finish()
    for action in progress.actions:
        await action.remove()
    await progress.update()
    if result is None or result.outcome == "cancelled":
        return  # the progress message says so; a cancelled run has no answer to show
    text = answer_text(result.output)
    answer = cl.Message(content=text) if text else None
    if answer is not None:
        await answer.send()
    await finish_answer(answer, citations_of(result.output), result)


async def cancel(client: AsyncOpenAI, response_id: str) -> None:
    error = await cancel_background(client, response_id)
    if error is not None:
        await cl.Message(content=error.text).send()
