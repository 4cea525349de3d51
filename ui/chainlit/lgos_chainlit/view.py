"""A turn's events (:mod:`lgos_ui.turn`) shown in the Chainlit thread, in the order they come.

The answer is one message per Response, created at its first token (Chainlit orders a turn's
steps and messages by creation); commentary collects in one open "Progress" step per Response,
server tool items and client tool calls are steps of their own; sources and outcome notes go
under the answer they belong to.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import AsyncExitStack

import chainlit as cl
from chainlit.utils import utc_now
from lgos_ui import PendingReview, events
from lgos_ui.events import Citation, Finished
from lgos_ui.tools import text_preview

from lgos_chainlit.reviews import send_review


class Progress:
    """One open "Progress" step per run that collects the graph's commentary lines."""

    def __init__(self) -> None:
        self.step: cl.Step | None = None
        self.lines: list[str] = []

    async def add(self, text: str) -> None:
        self.lines.append(text)
        output = "\n".join(f"- {line}" for line in self.lines)
        if self.step is None:
            self.step = cl.Step(name="Progress", type="run", default_open=True)
            # Chainlit orders a turn's steps by their start: set it as a context manager would.
            self.step.start = self.step.created_at
            self.step.end = utc_now()
            self.step.output = output
            await self.step.send()
        else:
            self.step.end = utc_now()
            self.step.output = output
            await self.step.update()


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

    def next_response(self) -> None:
        self.answer, self.citations, self.progress = None, [], Progress()

    async def show(self, event: events.TurnEvent) -> None:
        if isinstance(event, events.AnswerDelta | events.RefusalDelta):
            self.answer = self.answer or cl.Message(content="")
            await self.answer.stream_token(event.text)
        elif isinstance(event, events.Commentary):
            await self.progress.add(event.text)
        elif isinstance(event, events.ToolActivity):
            async with cl.Step(name=event.name, type="tool", default_open=True) as step:
                step.output = event.summary
        elif isinstance(event, events.Citation):
            self.citations.append(event)
        elif isinstance(event, events.Finished):
            await finish_answer(self.answer, self.citations, event)
            self.next_response()
        elif isinstance(event, events.TurnError):
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
