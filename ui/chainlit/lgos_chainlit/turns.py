"""One conversational turn: stream a Response, show it, answer client calls, pause for reviews.

Everything goes through the gateway (Responses, Files, MCP). The input ledger gets each
Response's output unchanged, then the client's function outputs; only final-answer text is
shown as the answer, commentary and tool items as steps.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import chainlit as cl
import openai
from chainlit.utils import utc_now
from lgos_ui import (
    DISPLAY_FILE,
    AnswerDelta,
    Citation,
    Commentary,
    Finished,
    GraphEntry,
    MCPClient,
    MCPError,
    MCPTool,
    PendingReview,
    RefusalDelta,
    StreamMapper,
    ToolActivity,
    offered_tools,
    offers_mcp,
    pending_review,
    request_metadata,
)
from lgos_ui.events import answer_text, citations_of, commentary_texts, finished
from lgos_ui.ledger import function_calls, function_output
from lgos_ui.mcp import parse_arguments
from lgos_ui.review import INTERRUPT_TOOL
from lgos_ui.tools import display_file_id, display_file_output

from lgos_chainlit import state
from lgos_chainlit.gateway import Gateway

log = logging.getLogger("lgos_chainlit")

MAX_TOOL_ROUNDS = 8
REVIEW_ACTION = "lgos_review"
REVIEW_BUTTONS = "lgos_review_buttons"
CANCEL_ACTION = "lgos_cancel"
TERMINAL = ("completed", "incomplete", "failed", "cancelled")


@dataclass
class Turn:
    gateway: Gateway
    entry: GraphEntry
    conversation_id: str | None
    mcp_tools: list[MCPTool] = field(default_factory=list)

    @property
    def tools(self) -> list[dict[str, Any]]:
        return offered_tools(self.entry, self.mcp_tools)

    def metadata(self) -> dict[str, str]:
        if self.entry.limited:
            return request_metadata(self.conversation_id)
        return request_metadata(
            self.conversation_id, state.settings_values(), self.entry.settings_defaults
        )

    async def load_mcp_tools(self) -> None:
        if not offers_mcp(self.entry, self.gateway.settings.mcp_graphs):
            return
        try:
            async with self.mcp() as client:
                self.mcp_tools = await client.list_tools()
        except MCPError as exc:
            await cl.Message(content=f"The gateway's MCP tools are unavailable: {exc}").send()

    def mcp(self) -> MCPClient:
        settings = self.gateway.settings
        return MCPClient.for_gateway(self.gateway.http, settings.gateway_url, settings.gateway_key)

    async def run(
        self, input_items: list[dict[str, Any]], previous_response_id: str | None = None
    ) -> None:
        """Request, show, answer client calls, repeat until an answer or a review."""
        ledger = state.ledger()
        for _ in range(MAX_TOOL_ROUNDS):
            result = await self.stream(input_items, previous_response_id)
            if result is None or result.outcome in ("error", "failed", "cancelled"):
                return
            if previous_response_id is not None:
                ledger.items.extend(input_items)  # the answered review, as sent
            ledger.add_output(result.output)
            await state.save_ledger(ledger)
            review = pending_review(result.response_id or "", self.entry.model, result.output)
            if review is not None:
                await ask_review(review)
                return
            calls = function_calls(result.output, exclude=[INTERRUPT_TOOL])
            if not calls or result.outcome != "completed":
                return
            for call in calls:
                ledger.items.append(function_output(call["call_id"], await self.execute(call)))
            await state.save_ledger(ledger)
            input_items, previous_response_id = ledger.snapshot(), None
        await cl.Message(content="Stopped: the graph kept calling tools.").send()

    async def stream(
        self, input_items: list[dict[str, Any]], previous_response_id: str | None
    ) -> Finished | None:
        mapper = StreamMapper()
        progress = Progress()
        # Created at the first token: Chainlit orders a turn's steps and messages by creation.
        answer: cl.Message | None = None
        refusal = False
        options: dict[str, Any] = {}
        if self.tools:
            options["tools"] = self.tools
        if previous_response_id is not None:
            options["previous_response_id"] = previous_response_id
        metadata = self.metadata()
        if metadata:
            options["metadata"] = metadata
        result: Finished | None = None
        try:
            stream = await self.gateway.openai.responses.create(
                model=self.entry.model, input=input_items, stream=True, **options
            )
            async for event in stream:
                for ui in mapper.feed(event.model_dump(mode="json", exclude_unset=True)):
                    if isinstance(ui, AnswerDelta | RefusalDelta):
                        answer = answer or cl.Message(content="")
                        if isinstance(ui, RefusalDelta) and not refusal:
                            refusal = True
                            await answer.stream_token("**Refused:** ")
                        await answer.stream_token(ui.text)
                    elif isinstance(ui, Commentary):
                        await progress.add(ui.text)
                    elif isinstance(ui, ToolActivity):
                        await show_tool(ui)
                    elif isinstance(ui, Finished):
                        result = ui
        except openai.APIStatusError as exc:
            await answer_error(answer, gateway_error(exc))
            return None
        except openai.APIError as exc:
            name = exc.__class__.__name__
            await answer_error(answer, f"The gateway could not be reached ({name}).")
            return None
        if result is None:
            result = Finished("error", {}, "The stream ended without a final event.")
        await finish_answer(answer, mapper.citations, result)
        return result

    async def execute(self, call: dict[str, Any]) -> str:
        name = call.get("name", "")
        arguments = str(call.get("arguments", ""))
        if name == DISPLAY_FILE and DISPLAY_FILE in self.entry.client_tools:
            return await self.display_file(arguments)
        if name in {t.name for t in self.mcp_tools}:
            return await self.call_mcp(name, arguments)
        return json.dumps({"error": f"this client does not implement {name!r}"})

    async def display_file(self, arguments: str) -> str:
        file_id = display_file_id(arguments)
        files = self.gateway.openai.files
        if file_id is None:
            return display_file_output(None, shown=False)
        try:
            meta = await files.retrieve(file_id)
            content = (await files.content(file_id)).read()
        except openai.APIError as exc:
            log.warning("display_file %s failed: %s", file_id, exc.__class__.__name__)
            await cl.Message(content=f"The file `{file_id}` could not be downloaded.").send()
            return display_file_output(None, shown=False)
        name = meta.filename or file_id
        mime = mime_of(name)
        element: cl.Image | cl.File
        if mime.startswith("image/"):
            element = cl.Image(name=name, content=content, display="inline", mime=mime)
        else:
            element = cl.File(name=name, content=content, display="inline", mime=mime)
        preview = ""
        if mime in ("text/markdown", "text/csv", "text/plain"):
            text = content.decode("utf-8", errors="replace")
            preview = f"\n\n```{'csv' if mime == 'text/csv' else 'markdown'}\n{text[:4000]}\n```"
        await cl.Message(content=f"**{name}**{preview}", elements=[element]).send()
        return display_file_output(name, shown=True)

    async def call_mcp(self, name: str, arguments: str) -> str:
        async with cl.Step(name=name, type="tool", show_input="json", default_open=True) as step:
            step.input = arguments
            try:
                async with self.mcp() as client:
                    result = await client.call_tool(name, parse_arguments(arguments))
            except MCPError as exc:
                step.output = f"failed: {exc}"
                step.is_error = True
                return json.dumps({"error": str(exc)})
            step.output = result.text
            step.is_error = result.is_error
            return result.as_output()

    async def background(self, input_items: list[dict[str, Any]]) -> None:
        """``background=true`` with an Idempotency-Key; poll, show progress, offer Cancel."""
        key = str(uuid.uuid4())
        metadata = self.metadata()
        options: dict[str, Any] = {"metadata": metadata} if metadata else {}
        try:
            created = await self.gateway.openai.responses.create(
                model=self.entry.model,
                input=input_items,
                background=True,
                extra_headers={"Idempotency-Key": key},
                **options,
            )
        except openai.APIStatusError as exc:
            await cl.Message(content=gateway_error(exc)).send()
            return
        await state.save(
            **{state.BACKGROUND: {"response_id": created.id, "key": key, "model": self.entry.model}}
        )
        watch_background(self.gateway, created.id)


POLLERS: dict[str, asyncio.Task[None]] = {}


def watch_background(gateway: Gateway, response_id: str) -> None:
    """Poll in a task of its own: the chat stays usable, so its Cancel button can be clicked
    (Chainlit disables actions while a message handler runs). One poller per run."""
    if response_id in POLLERS:
        return
    task = asyncio.create_task(poll_background(gateway, response_id))
    POLLERS[response_id] = task
    task.add_done_callback(lambda _: POLLERS.pop(response_id, None))


async def poll_background(gateway: Gateway, response_id: str) -> None:
    started = time.monotonic()
    progress = cl.Message(
        content="Background run queued…",
        actions=[
            cl.Action(name=CANCEL_ACTION, payload={"response_id": response_id}, label="Cancel")
        ],
    )
    await progress.send()
    shown = 0
    lines = Progress()
    snapshot: dict[str, Any] = {}
    while True:
        try:
            response = await gateway.openai.responses.retrieve(response_id)
        except openai.APIStatusError as exc:
            progress.content = gateway_error(exc)
            await progress.update()
            break
        snapshot = response.model_dump(mode="json", exclude_unset=True)
        notes = commentary_texts(snapshot.get("output") or [])
        for note in notes[shown:]:
            await lines.add(note)
        shown = len(notes)
        status = snapshot.get("status", "queued")
        elapsed = int(time.monotonic() - started)
        if status in TERMINAL:
            break
        latest = f" — {notes[-1]}" if notes else ""
        progress.content = f"Background run {status} ({elapsed} s){latest}"
        await progress.update()
        await asyncio.sleep(gateway.settings.poll_interval)
    for action in progress.actions:
        await action.remove()
    result = finished(snapshot) if snapshot else Finished("error", {}, "The run was lost.")
    progress.content = {
        "completed": "Background run completed.",
        "cancelled": "Background run cancelled.",
    }.get(result.outcome, f"Background run {result.outcome}.")
    await progress.update()
    await state.save(**{state.BACKGROUND: None})
    if result.outcome in ("completed", "incomplete"):
        ledger = state.ledger()
        ledger.add_output(result.output)
        await state.save_ledger(ledger)
    if result.outcome == "cancelled":
        return  # the progress message says so; a cancelled run has no answer to show
    text = answer_text(result.output)
    answer = cl.Message(content=text) if text else None
    if answer is not None:
        await answer.send()
    await finish_answer(answer, citations_of(result.output), result)


async def cancel_background(gateway: Gateway, response_id: str) -> None:
    try:
        await gateway.openai.responses.cancel(response_id)
    except openai.APIStatusError as exc:
        await cl.Message(content=gateway_error(exc)).send()


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


async def show_tool(activity: ToolActivity) -> None:
    if activity.kind == "function_call":
        return  # client calls are shown when this app runs them
    async with cl.Step(name=activity.name, type="tool", default_open=True) as step:
        step.output = activity.summary


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


def gateway_error(exc: openai.APIStatusError) -> str:
    message = exc.message
    body = exc.body
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            message = error["message"]
    return f"The gateway answered {exc.status_code}: {message}"


def mime_of(name: str) -> str:
    import mimetypes

    if name.lower().endswith(".md"):
        return "text/markdown"
    return mimetypes.guess_type(name)[0] or "application/octet-stream"


async def ask_review(review: PendingReview) -> None:
    """Persist first, then ask: the review survives a reload or an app restart."""
    await state.save_review(review)
    await send_review(review)


def review_buttons(review: PendingReview) -> list[cl.Action]:
    call = review.unanswered()[0]
    return [
        cl.Action(
            name=REVIEW_ACTION,
            payload={"response_id": review.response_id, "call_id": call.call_id, "answer": c},
            label=c.capitalize(),
        )
        for c in call.choices
    ]


async def send_review(review: PendingReview) -> None:
    call = review.unanswered()[0]
    content = call.content_markdown()
    lines = [f"### Review requested\n\n**{call.question}**"]
    if content:
        lines.append(content)
    hint = "Approve or reject with the buttons"
    if call.allow_other:
        hint += ", or type a revision in the chat: your next message is sent as feedback"
    lines.append(f"_{hint}._")
    actions = review_buttons(review)
    message = cl.Message(content="\n\n".join(lines), actions=actions)
    await message.send()
    cl.user_session.set(REVIEW_BUTTONS, [action.to_dict() for action in actions])
    await state.save(**{state.REVIEW_MESSAGE: message.id})


async def reattach_review(review: PendingReview) -> None:
    """After a reload the review message is in the history but buttons are never persisted:
    attach fresh ones to it (or ask again when that message never made it)."""
    message_id = cl.user_session.get(state.REVIEW_MESSAGE)
    if not isinstance(message_id, str):
        await send_review(review)
        return
    # Chainlit can resume one page twice (a socket reconnect): replace, never add, buttons.
    await remove_review_buttons()
    actions = review_buttons(review)
    for action in actions:
        await action.send(for_id=message_id)
    cl.user_session.set(REVIEW_BUTTONS, [action.to_dict() for action in actions])


async def remove_review_buttons() -> None:
    """A review is answered once: its buttons go, however it was answered."""
    for action in cl.user_session.get(REVIEW_BUTTONS) or []:
        await cl.Action(**action).remove()
    cl.user_session.set(REVIEW_BUTTONS, None)
