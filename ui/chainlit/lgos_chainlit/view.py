"""A turn's events (:mod:`lgos_ui.turn`) shown in the Chainlit thread, in the order they come.

The answer is one message per Response, created at its first token; a Response's commentary
collects in one step (:class:`lgos_ui.events.ProgressNotes`) created before that answer under the
same run, so it sits above the answer: Chainlit shows a run's children in the order they were
created (live) or started (reloaded), and a message's own child steps below the message. Server
tool items and client tool calls are steps of their own; sources and outcome notes go under the
answer they belong to.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import AsyncExitStack

import chainlit as cl
from chainlit.utils import utc_now
from lgos_ui import PendingReview, events
from lgos_ui.events import Citation, Finished, ProgressNotes
from lgos_ui.tools import text_preview

from lgos_chainlit.persisted import persist_last
from lgos_chainlit.reviews import send_review


class Progress:
    """One Response's commentary as a Chainlit step: open while the Response runs, renamed and
    collapsed once it ended (``public/steps.css`` drops Chainlit's "Using"/"Used" before
    these names)."""

    def __init__(self) -> None:
        self.step: cl.Step | None = None
        self.notes = ProgressNotes()

    async def add(self, text: str) -> None:
        self.notes.add(text)
        if self.step is None:
            # A sibling of the answer (same run) created before it, never a child of it.
            run = cl.context.current_run
            self.step = cl.Step(
                name=self.notes.label,
                type="run",
                parent_id=run.id if run is not None else None,
                default_open=True,
                show_input=False,
            )
            # Chainlit shows a step as running while it has a start and no end.
            self.step.start = self.step.created_at
            self.step.output = self.notes.markdown()
            await self.step.send()
        else:
            self.step.output = self.notes.markdown()
            await self.step.update()

    async def finish(self) -> None:
        if self.step is None or not self.notes.finish():
            return
        self.step.name = self.notes.label
        self.step.end = utc_now()
        # Chainlit's step closes itself when auto-collapse is on and the step is not running.
        self.step.auto_collapse = self.notes.collapsed
        await self.step.update()
        await persist_last(self.step)


class TurnView:
    """Shows the events of one turn (a message, a review's answer) as they come."""

    def __init__(self) -> None:
        self.answer: cl.Message | None = None
        self.citations: list[Citation] = []
        self.progress = Progress()
        self.tool_step: cl.Step | None = None
        """The running client tool's step, open from its call to its result."""
        self.tool_exit = AsyncExitStack()

    async def show_all(self, stream: AsyncIterator[events.TurnEvent]) -> None:
        async for event in stream:
            await self.show(event)
        await self.progress.finish()

    def next_response(self) -> None:
        self.answer, self.citations, self.progress = None, [], Progress()

    async def show(self, event: events.TurnEvent) -> None:
        if isinstance(event, events.AnswerDelta | events.RefusalDelta):
            if self.answer is None:
                # Created after this Response's commentary step, so it is shown below it.
                self.answer = cl.Message(content="", created_at=utc_now())
            await self.answer.stream_token(event.text)
        elif isinstance(event, events.Commentary):
            await self.progress.add(event.text)
        elif isinstance(event, events.ToolActivity):
            async with cl.Step(name=event.name, type="tool", default_open=True) as step:
                step.output = event.summary
        elif isinstance(event, events.Citation):
            self.citations.append(event)
        elif isinstance(event, events.Finished):
            await self.progress.finish()
            await finish_answer(self.answer, self.citations, event)
            self.next_response()
        elif isinstance(event, events.TurnError):
            await self.progress.finish()
            await answer_error(self.answer, event.text)
            self.next_response()
        elif isinstance(event, events.Notice):
            await cl.Message(content=event.text).send()
        elif isinstance(event, events.FileShown):
            await show_file(event)
        elif isinstance(event, PendingReview):
            await send_review(event)
        elif isinstance(event, events.ToolCall):
            step = cl.Step(name=event.name, type="tool", show_input="json", default_open=True)
            step.input = event.arguments
            self.tool_step = await self.tool_exit.enter_async_context(step)
        elif isinstance(event, events.ToolDone):
            await self.tool_done(event)

    async def tool_done(self, event: events.ToolDone) -> None:
        if self.tool_step is not None:
            self.tool_step.output = f"failed: {event.text}" if event.failed else event.text
            self.tool_step.is_error = event.is_error
        await self.tool_exit.aclose()
        self.tool_step = None


async def show_file(event: events.FileShown) -> None:
    element: cl.Image | cl.File
    if event.mime.startswith("image/"):
        element = cl.Image(
            name=event.name, content=event.content, display="inline", mime=event.mime
        )
    else:
        element = cl.File(name=event.name, content=event.content, display="inline", mime=event.mime)
    preview = text_preview(event.mime, event.content)
    content = f"**{event.name}**" + (f"\n\n{preview}" if preview else "")
    await cl.Message(content=content, elements=[element]).send()


def sources_markdown(citations: Sequence[Citation]) -> str:
    lines = [f"{i}. [{c.title}]({c.url})" for i, c in enumerate(citations, start=1)]
    return "\n\n**Sources**\n" + "\n".join(lines)


async def finish_answer(
    answer: cl.Message | None, citations: Sequence[Citation], result: Finished
) -> None:
    """Sources under the answer; a turn that did not complete says so, partial text kept."""
    suffix = sources_markdown(citations) if citations else ""
    if result.outcome != "completed" and result.message:
        suffix += f"\n\n**Warning:** {result.message}"
    if answer is None:
        if suffix:
            await cl.Message(content=suffix.strip()).send()
        return
    answer.content += suffix
    await answer.update()


async def answer_error(answer: cl.Message | None, text: str) -> None:
    if answer is None:
        await cl.Message(content=f"**Warning:** {text}").send()
        return
    answer.content += f"\n\n**Warning:** {text}"
    await answer.update()
