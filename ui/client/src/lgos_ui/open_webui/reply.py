"""One request from Open WebUI to the pipe: an answer, a review, or the answer to a review.

The turn itself runs in :class:`lgos_ui.turn.Turn`; this module matches Open WebUI's history to
the stored exchanges, uploads attachments, and renders the turn's events as Open WebUI's text
chunks and events (status lines, sources, the ask-user card).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from openai import APIError, AsyncOpenAI

from lgos_ui import events, turn
from lgos_ui.catalog import LIMITED_NOTICE, GraphEntry
from lgos_ui.events import TurnEvent, answer_text, citations_of
from lgos_ui.ledger import user_message
from lgos_ui.mcp import MCPError, MCPTool, ToolResult
from lgos_ui.open_webui.cards import (
    ask_user_arguments,
    ask_user_chunk,
    card_answer,
    review_markdown,
)
from lgos_ui.open_webui.history import matched_prefix, rebuild_ledger, turns_of
from lgos_ui.open_webui.images import InlineImage, InlineImageError, inline_images
from lgos_ui.open_webui.render import (
    attachment,
    file_markdown,
    outcome_note,
    short,
    source_event,
    status_event,
    tool_line,
    tool_text,
)
from lgos_ui.open_webui.store import ChatConversation, ChatState, ChatStore, Exchange
from lgos_ui.open_webui.variables import settings_values
from lgos_ui.review import PendingReview, answer_from_text
from lgos_ui.turn import Turn

Emitter = Callable[[dict[str, Any]], Awaitable[Any]]
Chunk = str | dict[str, Any]
WAITING = "Waiting for your review"


class OpenWebUITools:
    """MCP tools through Open WebUI's own connection to the gateway's MCP server (the model's
    tool server, handed to the pipe as ``__tools__``), else through the gateway's endpoint."""

    def __init__(self, tools: Mapping[str, Any], gateway: turn.ToolRunner) -> None:
        self.tools = tools
        self.gateway = gateway

    async def list_tools(self) -> list[MCPTool]:
        if not self.tools:
            return await self.gateway.list_tools()
        return [
            MCPTool(
                str(name),
                str((tool.get("spec") or {}).get("description") or ""),
                dict((tool.get("spec") or {}).get("parameters") or {}),
            )
            for name, tool in self.tools.items()
            if isinstance(tool, Mapping)
        ]

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> ToolResult:
        tool = self.tools.get(name)
        if not (isinstance(tool, Mapping) and callable(tool.get("callable"))):
            return await self.gateway.call_tool(name, arguments)
        try:
            value = await tool["callable"](**arguments)
        except Exception as exc:  # a tool server's failure is the graph's to read
            raise MCPError(f"{exc.__class__.__name__}: {exc}"[:500]) from exc
        return ToolResult.of({"content": [{"type": "text", "text": tool_text(value)}]})


@dataclass
class Reply:
    entry: GraphEntry
    chat_id: str
    model_id: str
    """Open WebUI's model id (``lgos.<graph>``), which the ask-user card names."""
    emit: Emitter
    client: AsyncOpenAI
    store: ChatStore
    chat_variables: Any = None
    tools: turn.ToolRunner | None = None
    mcp_graphs: Sequence[str] = ()
    poll_interval: float = 0.5
    progress: list[str] = field(default_factory=list)
    """The status lines shown so far (commentary, tool activity)."""
    request_id: str | None = None
    """The ``X-Request-Id`` its client sends; the turn's log lines carry it."""

    async def status(self, description: str) -> None:
        """A finished step (commentary, tool activity): Open WebUI keeps each in the history."""
        self.progress.append(description)
        await self.emit(status_event(description, done=True))

    async def settle(self) -> None:
        """A turn without progress shows no status line at all."""
        if not self.progress:
            await self.emit(status_event("", done=True, hidden=True))

    def graph_turn(self, state: ChatState) -> Turn:
        return Turn(
            self.client,
            self.entry,
            ChatConversation(self.store, self.chat_id, state),
            conversation_id=self.chat_id,
            settings=settings_values(self.entry, self.chat_variables),
            runner=self.tools,
            mcp_graphs=self.mcp_graphs,
            poll_interval=self.poll_interval,
            request_id=self.request_id,
        )

    async def respond(
        self, messages: list[dict[str, Any]], files: Sequence[Mapping[str, Any]]
    ) -> AsyncIterator[Chunk]:
        state = self.store.load(self.chat_id)
        try:
            if self.entry.limited:
                await self.status(LIMITED_NOTICE)
            if state.review is not None:
                async for chunk in self.answer_review(state, messages):
                    yield chunk
                return
            if card_answer(messages) is not None:
                yield "That review was already answered."
                return
            turns = turns_of(messages)
            if not turns:
                yield "⚠️ There is no message to answer."
                return
            *earlier, (text, _) = turns
            input_items = rebuild_ledger(earlier, state)
            state.exchanges = matched_prefix(earlier, state)
            try:
                images = inline_images(messages)
                file_ids = await self.upload_files(state, files)
                file_ids += await self.upload_images(state, images)
            except InlineImageError as exc:
                yield f"⚠️ The image could not be attached: {exc}. Nothing was sent."
                return
            except APIError as exc:
                failure = exc.__class__.__name__
                yield f"⚠️ The attachment could not be uploaded ({failure}); nothing was sent."
                return
            first = user_message(text, file_ids)
            state.exchanges.append(Exchange(text, [first]))
            self.store.save(self.chat_id, state)
            input_items.append(first)
            current = self.graph_turn(state)
            run = current.background if current.runs_in_background else current.run
            async for chunk in self.show_all(run(input_items)):
                yield chunk
            await self.settle()
        finally:
            await self.client.close()

    async def show_all(self, stream: AsyncIterator[TurnEvent]) -> AsyncIterator[Chunk]:
        running: str | None = None
        try:
            async for event in stream:
                if isinstance(event, events.BackgroundRun):
                    running = event.response_id
                async for chunk in self.show(event):
                    yield chunk
        except asyncio.CancelledError:
            # The person pressed Stop: a background run stops too.
            if running is not None:
                with contextlib.suppress(APIError):
                    await self.client.responses.cancel(running)
            raise

    async def show(self, event: TurnEvent) -> AsyncIterator[Chunk]:
        if isinstance(event, events.AnswerDelta | events.RefusalDelta):
            yield event.text
        elif isinstance(event, events.Commentary):
            await self.status(short(event.text, 300))
        elif isinstance(event, events.Citation):
            await self.emit(source_event(event))
        elif isinstance(event, events.ToolActivity):
            await self.status(tool_line(event))
        elif isinstance(event, events.Finished):
            note = outcome_note(event)
            if note:
                yield note
        elif isinstance(event, events.TurnError):
            yield f"\n\n⚠️ {event.text}"
        elif isinstance(event, events.Notice) and event.warning:
            yield f"\n\n⚠️ {event.text}\n\n"
        elif isinstance(event, events.Notice):
            await self.status(event.text)
        elif isinstance(event, events.ToolCall):
            await self.status(f"Tool {event.name}: {short(event.arguments)}")
        elif isinstance(event, events.ToolDone):
            done = f"failed: {event.text}" if event.failed else f"→ {short(event.text)}"
            await self.status(f"Tool {event.call.name} {done}")
        elif isinstance(event, events.FileShown):
            yield "\n\n" + file_markdown(event.name, event.mime, event.content) + "\n\n"
        elif isinstance(event, PendingReview):
            async for chunk in self.ask(event):
                yield chunk
        elif isinstance(event, events.BackgroundProgress):
            for note in event.new:
                await self.status(short(note, 300))
            if not event.terminal and not event.notes:
                line = f"Background run {event.status} ({event.elapsed} s)"
                await self.emit(status_event(line))
        elif isinstance(event, events.BackgroundFinished):
            async for chunk in self.background_result(event.result):
                yield chunk

    async def background_result(self, result: events.Finished) -> AsyncIterator[Chunk]:
        text = answer_text(result.output)
        if text:
            yield text
        for citation in citations_of(result.output):
            await self.emit(source_event(citation))
        note = outcome_note(result)
        if note:
            yield note
        await self.status(f"Background run {result.outcome}")

    # -- reviews ----------------------------------------------------------------------------------

    async def ask(self, review: PendingReview) -> AsyncIterator[Chunk]:
        call = review.unanswered()[0]
        await self.status(WAITING)
        await self.settle()
        yield "\n\n" + review_markdown(call) + "\n\n"
        arguments = ask_user_arguments(call)
        if arguments is not None:
            yield ask_user_chunk(self.model_id, call.call_id, arguments)

    async def answer_review(
        self, state: ChatState, messages: list[dict[str, Any]]
    ) -> AsyncIterator[Chunk]:
        review = state.review
        assert review is not None
        call = review.unanswered()[0]
        answer = card_answer(messages)
        if answer is None:
            turns = turns_of(messages)
            answer = answer_from_text(turns[-1][0] if turns else "", call)
        if not answer:
            # The card was dismissed or timed out: the review stays open for the next message.
            yield (
                "The review is still open: answer "
                + " / ".join(f"`{c}`" for c in call.choices)
                + (" or say what to change" if call.allow_other else "")
                + " in your next message."
            )
            await self.status(WAITING)
            await self.settle()
            return
        if not call.allow_other and answer.lower() not in (c.lower() for c in call.choices):
            yield "A review is waiting: answer " + " or ".join(f"`{c}`" for c in call.choices) + "."
            return
        review = review.answered(call.call_id, answer)
        yield f"Review answered: **{short(answer, 200)}**\n\n"
        if not review.complete:
            state.review = review
            self.store.save(self.chat_id, state)
            async for chunk in self.ask(review):
                yield chunk
            return
        state.review = None
        self.store.save(self.chat_id, state)
        async for chunk in self.show_all(self.graph_turn(state).resume(review)):
            yield chunk
        await self.settle()

    # -- attachments ------------------------------------------------------------------------------

    async def upload_files(self, state: ChatState, files: Sequence[Mapping[str, Any]]) -> list[str]:
        """New attachments go to the Files service through the gateway, once each."""
        if self.entry.limited:
            return []
        new: list[str] = []
        for attached in files:
            local = attachment(attached)
            if local is None or local.owui_id in state.files:
                continue
            data = await asyncio.to_thread(local.path.read_bytes)
            new.append(await self.upload(state, local.owui_id, local.name, data, local.mime))
        return new

    async def upload_images(self, state: ChatState, images: Sequence[InlineImage]) -> list[str]:
        """Inline images (a vision model's attachments) take the same way as files. A repeated
        image (a regenerated answer) is not uploaded again."""
        if self.entry.limited:
            return []
        return [
            state.files.get(image.key)
            or await self.upload(state, image.key, image.name, image.data, image.mime)
            for image in images
        ]

    async def upload(self, state: ChatState, key: str, name: str, data: bytes, mime: str) -> str:
        uploaded = await self.client.files.create(file=(name, data, mime), purpose="user_data")
        state.files[key] = uploaded.id
        await self.status(f"Attached {name} for the graph")
        return uploaded.id
