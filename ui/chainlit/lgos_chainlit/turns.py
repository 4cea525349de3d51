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
        answer = cl.Message(content="")
        started = False
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
                        if isinstance(ui, RefusalDelta) and not refusal:
                            refusal = True
                            await answer.stream_token("**Refused:** ")
                        started = True
                        await answer.stream_token(ui.text)
                    elif isinstance(ui, Commentary):
                        await show_commentary(ui.text)
                    elif isinstance(ui, ToolActivity):
                        await show_tool(ui)
                    elif isinstance(ui, Finished):
                        result = ui
        except openai.APIStatusError as exc:
            await answer_error(answer, started, gateway_error(exc))
            return None
        except openai.APIError as exc:
            await answer_error(
                answer, started, f"The gateway could not be reached ({exc.__class__.__name__})."
            )
            return None
        if result is None:
            result = Finished("error", {}, "The stream ended without a final event.")
        await finish_answer(answer, started, mapper.citations, result)
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
        await cl.Message(content=f"📎 **{name}**{preview}", elements=[element]).send()
        return display_file_output(name, shown=True)

    async def call_mcp(self, name: str, arguments: str) -> str:
        async with cl.Step(name=name, type="tool", show_input="json") as step:
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
        await poll_background(self.gateway, created.id)


async def poll_background(gateway: Gateway, response_id: str) -> None:
    started = time.monotonic()
    progress = cl.Message(
        content="⏳ Background run queued…",
        actions=[
            cl.Action(name=CANCEL_ACTION, payload={"response_id": response_id}, label="Cancel")
        ],
    )
    await progress.send()
    shown = 0
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
            await show_commentary(note)
        shown = len(notes)
        status = snapshot.get("status", "queued")
        elapsed = int(time.monotonic() - started)
        if status in TERMINAL:
            break
        latest = f" — {notes[-1]}" if notes else ""
        progress.content = f"⏳ Background run {status} ({elapsed} s){latest}"
        await progress.update()
        await asyncio.sleep(gateway.settings.poll_interval)
    for action in progress.actions:
        await action.remove()
    result = finished(snapshot) if snapshot else Finished("error", {}, "The run was lost.")
    progress.content = {
        "completed": "✅ Background run completed.",
        "cancelled": "⏹️ Background run cancelled.",
    }.get(result.outcome, f"⚠️ Background run {result.outcome}.")
    await progress.update()
    await state.save(**{state.BACKGROUND: None})
    if result.outcome in ("completed", "incomplete"):
        ledger = state.ledger()
        ledger.add_output(result.output)
        await state.save_ledger(ledger)
    text = answer_text(result.output)
    answer = cl.Message(content=text)
    await finish_answer(answer, bool(text), citations_of(result.output), result)


async def cancel_background(gateway: Gateway, response_id: str) -> None:
    try:
        await gateway.openai.responses.cancel(response_id)
    except openai.APIStatusError as exc:
        await cl.Message(content=gateway_error(exc)).send()


async def show_commentary(text: str) -> None:
    async with cl.Step(name="Progress", type="run") as step:
        step.output = text


async def show_tool(activity: ToolActivity) -> None:
    if activity.kind == "function_call":
        return  # client calls are shown when this app runs them
    async with cl.Step(name=activity.name, type="tool") as step:
        step.output = activity.summary


def sources_markdown(citations: Sequence[Citation]) -> str:
    lines = [f"{i}. [{c.title}]({c.url})" for i, c in enumerate(citations, start=1)]
    return "\n\n**Sources**\n" + "\n".join(lines)


async def finish_answer(
    answer: cl.Message, started: bool, citations: Sequence[Citation], result: Finished
) -> None:
    suffix = sources_markdown(citations) if citations else ""
    if result.outcome != "completed" and result.message:
        suffix += f"\n\n⚠️ {result.message}"
    if not started and not suffix:
        return
    answer.content += suffix
    if started:
        await answer.update()
    else:
        await answer.send()


async def answer_error(answer: cl.Message, started: bool, text: str) -> None:
    answer.content += f"\n\n⚠️ {text}" if started else f"⚠️ {text}"
    await (answer.update() if started else answer.send())


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


async def send_review(review: PendingReview) -> None:
    call = review.unanswered()[0]
    content = call.content_markdown()
    lines = [f"### 📝 Review requested\n\n**{call.question}**"]
    if content:
        lines.append(content)
    hint = "Approve or reject with the buttons"
    if call.allow_other:
        hint += ", or type a revision in the chat: your next message is sent as feedback"
    lines.append(f"_{hint}._")
    actions = [
        cl.Action(
            name=REVIEW_ACTION,
            payload={"response_id": review.response_id, "call_id": call.call_id, "answer": c},
            label=c.capitalize(),
        )
        for c in call.choices
    ]
    await cl.Message(content="\n\n".join(lines), actions=actions).send()
