"""
title: LGOS
description: LangGraph graphs served by LGOS, through the stack's gateway (Responses API).
version: 0.1.0
license: MIT
"""

# An Open WebUI Function (a manifold Pipe), installed and kept up to date by install_pipe.py.
# Client logic shared with the Chainlit UI lives in lgos_ui (installed into Open WebUI's venv);
# this module holds only what is specific to Open WebUI: its events, its chat history, its files.
#
# Open WebUI keeps chats as text; LGOS needs the Responses items a turn produced (function and
# interrupt exchanges replay unchanged). So each chat's items are kept in a small JSON store
# under DATA_DIR, keyed by chat id, and matched against Open WebUI's history on every request.

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import re
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, cast

import httpx
from lgos_ui import (
    DISPLAY_FILE,
    LIMITED_NOTICE,
    AnswerDelta,
    CatalogError,
    Citation,
    Commentary,
    Finished,
    GraphEntry,
    MCPClient,
    MCPError,
    PendingReview,
    RefusalDelta,
    StreamMapper,
    ToolActivity,
    answer_from_text,
    fetch_catalog,
    offered_tools,
    offers_mcp,
    pending_review,
    request_metadata,
    setting_fields,
)
from lgos_ui.catalog import GRAPH_PREFIX, entry_from_extension
from lgos_ui.errors import gateway_error_text
from lgos_ui.events import answer_text, citations_of, commentary_texts, finished
from lgos_ui.ledger import Item, function_calls, function_output, user_message
from lgos_ui.mcp import MCPTool, parse_arguments
from lgos_ui.review import INTERRUPT_TOOL, InterruptCall
from lgos_ui.settings import coerce
from lgos_ui.tools import display_file_id, display_file_output
from openai import APIError, APIStatusError, AsyncOpenAI
from pydantic import BaseModel, Field

log = logging.getLogger("lgos_pipe")

Emitter = Callable[[dict[str, Any]], Awaitable[Any]]
MAX_TOOL_ROUNDS = 8
CATALOG_TTL = 10.0
ASK_USER = "ask_user"
"""Open WebUI's own question card (0.12): a pending function call it persists in the chat."""
REVIEW_QUESTION_ID = "review"
BACKGROUND_FEATURE = "background"
INTERRUPTS_FEATURE = "interrupts"
TERMINAL = ("completed", "incomplete", "failed", "cancelled")


# ---------------------------------------------------------------------------------------------
# Per-chat state: the Responses items of each exchange, the pending review, uploaded files.


@dataclass
class Exchange:
    """One user turn as Open WebUI shows it, and every item LGOS saw for it."""

    user: str
    items: list[Item] = field(default_factory=list)


@dataclass
class ChatState:
    exchanges: list[Exchange] = field(default_factory=list)
    review: PendingReview | None = None
    files: dict[str, str] = field(default_factory=dict)
    """Open WebUI file id → Files service id (each attachment is uploaded once)."""
    background: dict[str, str] | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "exchanges": [{"user": e.user, "items": e.items} for e in self.exchanges],
            "review": self.review.to_json() if self.review else None,
            "files": self.files,
            "background": self.background,
        }

    @classmethod
    def from_json(cls, value: Any) -> ChatState:
        if not isinstance(value, Mapping):
            return cls()
        exchanges = [
            Exchange(
                str(e.get("user", "")), [i for i in e.get("items") or [] if isinstance(i, dict)]
            )
            for e in value.get("exchanges") or []
            if isinstance(e, Mapping)
        ]
        files = value.get("files")
        background = value.get("background")
        return cls(
            exchanges=exchanges,
            review=PendingReview.from_json(value.get("review")),
            files={str(k): str(v) for k, v in files.items()} if isinstance(files, Mapping) else {},
            background=dict(background) if isinstance(background, Mapping) else None,
        )


class ChatStore:
    """One JSON file per chat, written atomically (a crash never leaves half a file)."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def _path(self, chat_id: str) -> Path:
        safe = re.sub(r"[^A-Za-z0-9_.-]", "_", chat_id)[:200] or "_"
        return self.root / f"{safe}.json"

    def load(self, chat_id: str) -> ChatState:
        try:
            return ChatState.from_json(json.loads(self._path(chat_id).read_text()))
        except (OSError, ValueError):
            return ChatState()

    def save(self, chat_id: str, state: ChatState) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        path = self._path(chat_id)
        fd, tmp = tempfile.mkstemp(dir=self.root, prefix=".chat-")
        with os.fdopen(fd, "w") as out:
            json.dump(state.to_json(), out, separators=(",", ":"))
        os.replace(tmp, path)


# ---------------------------------------------------------------------------------------------
# Open WebUI's history → the Responses input ledger.


def message_text(content: Any) -> str:
    """The text of an Open WebUI chat message (a string or a list of content parts)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            str(p.get("text", ""))
            for p in content
            if isinstance(p, Mapping) and p.get("type") == "text"
        )
    return ""


def turns_of(messages: Sequence[Mapping[str, Any]]) -> list[tuple[str, str]]:
    """(user text, assistant text) pairs; system prompts are Open WebUI's, not the graph's."""
    turns: list[tuple[str, str]] = []
    for message in messages:
        role = message.get("role")
        if role == "user":
            turns.append((message_text(message.get("content")), ""))
        elif role == "assistant" and turns:
            user, answer = turns[-1]
            turns[-1] = (user, answer + message_text(message.get("content")))
    return turns


def rebuild_ledger(earlier: Sequence[tuple[str, str]], state: ChatState) -> list[Item]:
    """The input items of every earlier turn.

    While Open WebUI's history matches the stored exchanges, their items replay unchanged; from
    the first turn that differs (an edited message, a chat from before the pipe), the history's
    text stands in, so a regenerated or edited chat still reads naturally.
    """
    items: list[Item] = []
    matched = True
    for index, (user, answer) in enumerate(earlier):
        exchange = state.exchanges[index] if index < len(state.exchanges) else None
        if matched and exchange is not None and exchange.user == user and exchange.items:
            items.extend(dict(i) for i in exchange.items)
            continue
        matched = False
        items.append(user_message(user))
        if answer:
            items.append({"role": "assistant", "content": answer})
    return items


def matched_prefix(earlier: Sequence[tuple[str, str]], state: ChatState) -> list[Exchange]:
    """The stored exchanges that still match the history (a new turn is stored after them)."""
    kept: list[Exchange] = []
    for (user, _), exchange in zip(earlier, state.exchanges, strict=False):
        if exchange.user != user:
            break
        kept.append(exchange)
    return kept


# ---------------------------------------------------------------------------------------------
# Settings: chat variables declared by the graph's model entry (see install_pipe.py).


def variables_prompt(entry: GraphEntry) -> str:
    """The system prompt that declares each setting as an Open WebUI chat variable.

    Open WebUI renders these as a form per chat and hands the values to the pipe as
    ``chat_variables``; the pipe drops the system message itself, so nothing reaches the graph
    as prompt text.
    """
    lines = []
    for setting in setting_fields(entry.settings_schema, entry.settings_defaults):
        label = setting.label.replace(":", " ")
        if setting.kind == "select":
            options = json.dumps([str(o) for o in setting.options])
            spec = f"select:options={options}:default={setting.default}"
        elif setting.kind == "switch":
            spec = "checkbox" + (":default=true" if setting.default else "")
        elif setting.kind in ("number", "integer"):
            spec = "number"
            if setting.minimum is not None:
                spec += f":min={setting.minimum}"
            if setting.maximum is not None:
                spec += f":max={setting.maximum}"
            if setting.default is not None:
                spec += f":default={setting.default}"
        else:
            spec = "text" + (f":default={setting.default}" if setting.default else "")
        lines.append(f"{label}: {{{{chat.variables.{setting.id} | {spec}:label={label}}}}}")
    return "\n".join(lines)


def settings_values(entry: GraphEntry, chat_variables: Any) -> dict[str, Any]:
    """The graph's settings from Open WebUI's chat variables, in the schema's types."""
    values: dict[str, Any] = {}
    given = chat_variables if isinstance(chat_variables, Mapping) else {}
    for setting in setting_fields(entry.settings_schema, entry.settings_defaults):
        raw = given.get(setting.id)
        if raw is None or raw == "":
            continue
        if setting.kind == "switch" and isinstance(raw, str):
            raw = raw.strip().lower() in ("true", "1", "yes", "on")
        values[setting.id] = coerce(setting, raw)
    return values


# ---------------------------------------------------------------------------------------------
# Reviews: Open WebUI's persisted ask-user card, answered on the card or in the next message.


def ask_user_arguments(call: InterruptCall) -> dict[str, Any] | None:
    """The card for one interrupt, or ``None`` when its choices don't fit (2-3 options)."""
    choices = call.choices
    if not 2 <= len(choices) <= 3:
        return None
    descriptions = {
        "approve": "Go ahead as drafted.",
        "reject": "Discard it; nothing is stored.",
    }
    return {
        "questions": [
            {
                "id": REVIEW_QUESTION_ID,
                "header": "Review",
                "question": call.question[:500],
                "options": [
                    {
                        "label": choice[:80],
                        "description": descriptions.get(choice.lower(), f"Answer {choice!r}."),
                    }
                    for choice in choices
                ],
                "allow_other": call.allow_other,
            }
        ],
        "allow_other": call.allow_other,
        # The longest Open WebUI allows; a card that times out leaves the review open anyway.
        "timeout_ms": 240_000,
    }


def ask_user_chunk(model: str, call_id: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
    """A chat-completion chunk with one ``ask_user`` tool call: Open WebUI stages it as a card,
    saves the chat and stops; the answer comes back as a tool message on the next request."""
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex}",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "delta": {
                    "role": "assistant",
                    "tool_calls": [
                        {
                            "index": 0,
                            "id": call_id,
                            "type": "function",
                            "function": {"name": ASK_USER, "arguments": json.dumps(arguments)},
                        }
                    ],
                },
                "finish_reason": None,
            }
        ],
    }


def card_answer(messages: Sequence[Mapping[str, Any]]) -> str | None:
    """The person's answer on the card, when this request resumes from it (else ``None``).

    Open WebUI replays the card as an assistant ``tool_calls`` message and a ``tool`` message
    whose content is ``{"status": "answered", "answers": {...}}``; the last message decides.
    """
    if not messages or messages[-1].get("role") != "tool":
        return None
    content = message_text(messages[-1].get("content"))
    try:
        payload = json.loads(content)
    except ValueError:
        # "Error: tool call rejected by user." — the card was dismissed, not answered.
        return ""
    if not isinstance(payload, Mapping):
        return None
    if payload.get("status") != "answered":
        return ""  # cancelled or timed out: the review stays pending
    answers = payload.get("answers")
    value = answers.get(REVIEW_QUESTION_ID) if isinstance(answers, Mapping) else None
    if value is None and isinstance(answers, Mapping) and answers:
        value = next(iter(answers.values()))
    return _answer_string(value)


def _answer_string(value: Any) -> str | None:
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, list):
        parts = [s for s in (_answer_string(v) for v in value) if s]
        return ", ".join(parts) if parts else None
    if isinstance(value, Mapping):
        for key in ("other", "text", "custom", "value", "label", "answer", "selected", "answers"):
            found = _answer_string(value.get(key))
            if found:
                return found
    return None


def review_markdown(call: InterruptCall) -> str:
    """What the person reviews, in the chat as Markdown (the card holds only the question)."""
    parts = [f"### Review requested\n\n**{call.question}**"]
    content = call.content_markdown()
    if content:
        parts.append(content)
    hint = "Answer on the card below"
    if call.allow_other:
        hint += " (type a revision under *Other*)"
    hint += "; if you dismiss it, answer in your next message: " + " / ".join(
        f"`{c}`" for c in call.choices
    )
    if call.allow_other:
        hint += " or what to change"
    parts.append(f"_{hint}._")
    return "\n\n".join(parts)


# ---------------------------------------------------------------------------------------------
# Stream events → what Open WebUI shows.


def status_event(description: str, *, done: bool = False, hidden: bool = False) -> dict[str, Any]:
    return {"type": "status", "data": {"description": description, "done": done, "hidden": hidden}}


def source_event(citation: Citation) -> dict[str, Any]:
    """A clickable source under the answer (Open WebUI's ``source`` event)."""
    return {
        "type": "source",
        "data": {
            "source": {"name": citation.title, "url": citation.url},
            "document": [citation.title],
            "metadata": [{"source": citation.url, "name": citation.title, "url": citation.url}],
        },
    }


def tool_line(activity: ToolActivity) -> str:
    if activity.kind == "web_search_call":
        return f"Web search: {activity.summary}"
    if activity.kind == "custom_tool_call_output":
        return f"Tool {activity.name} → {_short(activity.summary)}"
    return f"Tool {activity.name}: {_short(activity.summary)}"


def _short(text: str, limit: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def tool_text(value: Any) -> str:
    """An Open WebUI tool result as text: MCP content parts become their text."""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(p, Mapping) for p in value):
        texts = [str(p.get("text", "")) for p in value if p.get("type") == "text"]
        if texts:
            return "\n".join(texts)
    return json.dumps(value, default=str)


def outcome_note(result: Finished) -> str:
    if result.outcome == "completed" or not result.message:
        return ""
    return f"\n\n⚠️ {result.message}"


def gateway_error(exc: APIStatusError) -> str:
    return gateway_error_text(exc.status_code, exc.message, exc.body)


# ---------------------------------------------------------------------------------------------
# The pipe.


class Pipe:
    class Valves(BaseModel):
        GATEWAY_URL: str = Field(
            default="http://127.0.0.1:3000/v1", description="The gateway's OpenAI base URL."
        )
        GATEWAY_TYPE: Literal["litellm", "bifrost"] = Field(
            default="litellm", description="Which native catalog lists the graphs."
        )
        GATEWAY_API_KEY: str = Field(default="", description="The gateway key (server-side only).")
        MCP_GRAPHS: str = Field(
            default="",
            description="Extra graphs (comma-separated) offered the gateway's MCP tools.",
        )
        POLL_INTERVAL: float = Field(default=0.5, description="Seconds between background polls.")
        STATE_DIR: str = Field(
            default="", description="Where chat state is kept (default: DATA_DIR/lgos-chats)."
        )

    def __init__(self) -> None:
        self.type = "manifold"
        self.valves = self.Valves()
        self._catalog: list[GraphEntry] = []
        self._fetched = 0.0
        self._catalog_key: tuple[str, str, str] | None = None

    # -- catalog ------------------------------------------------------------------------------

    async def catalog(self) -> list[GraphEntry]:
        key = (self.valves.GATEWAY_URL, self.valves.GATEWAY_TYPE, self.valves.GATEWAY_API_KEY)
        fresh = time.monotonic() - self._fetched < CATALOG_TTL
        if self._catalog and fresh and key == self._catalog_key:
            return self._catalog
        async with httpx.AsyncClient(timeout=httpx.Timeout(15.0, connect=5.0)) as http:
            try:
                self._catalog = await fetch_catalog(
                    http,
                    self.valves.GATEWAY_URL,
                    self.valves.GATEWAY_API_KEY,
                    self.valves.GATEWAY_TYPE,
                )
                self._fetched, self._catalog_key = time.monotonic(), key
            except CatalogError as exc:
                log.warning("LGOS catalog read failed: %s", exc)
        return self._catalog

    async def pipes(self) -> list[dict[str, str]]:
        return [{"id": entry.graph, "name": entry.graph} for entry in await self.catalog()]

    async def entry(self, model_id: str) -> GraphEntry:
        graph = model_id.split(".", 1)[1] if "." in model_id else model_id
        for entry in await self.catalog():
            if entry.graph == graph:
                return entry
        return entry_from_extension(f"{GRAPH_PREFIX}{graph}", None)

    def store(self) -> ChatStore:
        root = self.valves.STATE_DIR or os.path.join(os.environ.get("DATA_DIR", "."), "lgos-chats")
        return ChatStore(Path(root))

    def openai(self) -> AsyncOpenAI:
        return AsyncOpenAI(
            base_url=self.valves.GATEWAY_URL,
            api_key=self.valves.GATEWAY_API_KEY or "missing",
            # A float, not an httpx.Timeout: Open WebUI's openai and ours bundle different httpx.
            timeout=600.0,
            max_retries=1,
        )

    # -- entry point --------------------------------------------------------------------------

    async def pipe(
        self,
        body: dict[str, Any],
        __event_emitter__: Emitter | None = None,
        __chat_id__: str | None = None,
        __files__: list[dict[str, Any]] | None = None,
        __metadata__: dict[str, Any] | None = None,
        __tools__: dict[str, Any] | None = None,
        __task__: str | None = None,
    ) -> AsyncIterator[str | dict[str, Any]] | str:
        if __task__:
            # Title/tag/follow-up generation must never cost a graph run.
            return ""
        metadata = __metadata__ or {}
        entry = await self.entry(str(body.get("model", "")))
        chat_id = __chat_id__ or metadata.get("chat_id") or f"local-{uuid.uuid4().hex}"
        turn = Turn(
            pipe=self,
            entry=entry,
            chat_id=str(chat_id),
            emit=__event_emitter__ or _no_emit,
            chat_variables=metadata.get("chat_variables"),
            owui_tools=__tools__ or {},
            model_id=str(body.get("model", "")),
        )
        return turn.respond(list(body.get("messages") or []), __files__ or [])


async def _no_emit(event: dict[str, Any]) -> None:
    return None


@dataclass
class Turn:
    """One request from Open WebUI: an answer, a review, or the answer to a review."""

    pipe: Pipe
    entry: GraphEntry
    chat_id: str
    emit: Emitter
    chat_variables: Any
    owui_tools: Mapping[str, Any]
    model_id: str
    mcp_tools: list[MCPTool] = field(default_factory=list)
    progress: list[str] = field(default_factory=list)
    """The status lines shown so far (commentary, tool activity)."""

    async def status(self, description: str) -> None:
        """A finished step (commentary, tool activity): Open WebUI keeps each in the history."""
        self.progress.append(description)
        await self.emit(status_event(description, done=True))

    async def settle(self) -> None:
        """A turn without progress shows no status line at all."""
        if not self.progress:
            await self.emit(status_event("", done=True, hidden=True))

    def metadata(self) -> dict[str, str]:
        if self.entry.limited:
            return request_metadata(self.chat_id)
        return request_metadata(
            self.chat_id,
            settings_values(self.entry, self.chat_variables),
            self.entry.settings_defaults,
        )

    async def respond(
        self, messages: list[dict[str, Any]], files: list[dict[str, Any]]
    ) -> AsyncIterator[str | dict[str, Any]]:
        store = self.pipe.store()
        state = store.load(self.chat_id)
        client = self.pipe.openai()
        try:
            if self.entry.limited:
                await self.status(LIMITED_NOTICE)
            if state.review is not None:
                async for chunk in self.answer_review(client, store, state, messages):
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
                file_ids = await self.upload_files(client, state, files)
            except APIError as exc:
                failure = exc.__class__.__name__
                yield f"⚠️ The attachment could not be uploaded ({failure}); nothing was sent."
                return
            first = user_message(text, file_ids)
            exchange = Exchange(text, [first])
            state.exchanges.append(exchange)
            store.save(self.chat_id, state)
            input_items.append(first)
            if self.entry.has(BACKGROUND_FEATURE) and not self.entry.has(INTERRUPTS_FEATURE):
                async for chunk in self.background(client, store, state, input_items):
                    yield chunk
                return
            async for chunk in self.run(client, store, state, input_items):
                yield chunk
        finally:
            await client.close()

    # -- the Responses loop -------------------------------------------------------------------

    async def run(
        self,
        client: AsyncOpenAI,
        store: ChatStore,
        state: ChatState,
        input_items: list[Item],
        previous_response_id: str | None = None,
    ) -> AsyncIterator[str | dict[str, Any]]:
        exchange = state.exchanges[-1]
        # What a follow-up request replays: the whole conversation so far, this turn included.
        ledger = self.all_items(state) if previous_response_id is not None else list(input_items)
        await self.load_mcp_tools()
        for _ in range(MAX_TOOL_ROUNDS):
            result: Finished | None = None
            async for chunk in self.stream(client, input_items, previous_response_id):
                if isinstance(chunk, Finished):
                    result = chunk
                else:
                    yield chunk
            if result is None or result.outcome in ("error", "failed", "cancelled"):
                await self.settle()
                return
            if previous_response_id is not None:
                exchange.items.extend(input_items)  # the answered review, as sent
                ledger.extend(input_items)
            exchange.items.extend(result.output)
            ledger.extend(result.output)
            review = pending_review(result.response_id or "", self.entry.model, result.output)
            if review is not None:
                state.review = review  # stored before the person is asked
                store.save(self.chat_id, state)
                async for part in self.ask(review):
                    yield part
                return
            store.save(self.chat_id, state)
            calls = function_calls(result.output, exclude=[INTERRUPT_TOOL])
            if not calls or result.outcome != "completed":
                await self.settle()
                return
            outputs = []
            for call in calls:
                output = await self.execute(call)
                if isinstance(output, tuple):
                    output, shown = output
                    yield shown
                outputs.append(function_output(str(call["call_id"]), output))
            exchange.items.extend(outputs)
            ledger.extend(outputs)
            store.save(self.chat_id, state)
            input_items, previous_response_id = list(ledger), None
        yield "\n\n⚠️ Stopped: the graph kept calling tools."

    @staticmethod
    def all_items(state: ChatState) -> list[Item]:
        return [dict(i) for e in state.exchanges for i in e.items]

    async def stream(
        self, client: AsyncOpenAI, input_items: list[Item], previous_response_id: str | None
    ) -> AsyncIterator[str | Finished]:
        mapper = StreamMapper()
        options: dict[str, Any] = {}
        tools = offered_tools(self.entry, self.mcp_tools)
        if tools:
            options["tools"] = tools
        if previous_response_id is not None:
            options["previous_response_id"] = previous_response_id
        metadata = self.metadata()
        if metadata:
            options["metadata"] = metadata
        result: Finished | None = None
        refused = False
        try:
            # The items are Responses input as the server sent them (plain dicts, kept unchanged).
            stream = cast(
                "AsyncIterator[Any]",
                await client.responses.create(
                    model=self.entry.model, input=cast(Any, input_items), stream=True, **options
                ),
            )
            async for event in stream:
                for ui in mapper.feed(event.model_dump(mode="json", exclude_unset=True)):
                    if isinstance(ui, AnswerDelta):
                        yield ui.text
                    elif isinstance(ui, RefusalDelta):
                        if not refused:
                            refused = True
                            yield "**Refused:** "
                        yield ui.text
                    elif isinstance(ui, Commentary):
                        await self.status(_short(ui.text, 300))
                    elif isinstance(ui, Citation):
                        await self.emit(source_event(ui))
                    elif isinstance(ui, ToolActivity) and ui.kind != "function_call":
                        await self.status(tool_line(ui))
                    elif isinstance(ui, Finished):
                        result = ui
        except APIStatusError as exc:
            # A 400 (e.g. settings LGOS refused) is shown to the person, never swallowed.
            yield f"\n\n⚠️ {gateway_error(exc)}"
            return
        except APIError as exc:
            yield f"\n\n⚠️ The gateway could not be reached ({exc.__class__.__name__})."
            return
        if result is None:
            result = Finished("error", {}, "The stream ended without a final event.")
        note = outcome_note(result)
        if note:
            yield note
        yield result

    # -- reviews ------------------------------------------------------------------------------

    async def ask(self, review: PendingReview) -> AsyncIterator[str | dict[str, Any]]:
        call = review.unanswered()[0]
        await self.status("Waiting for your review")
        await self.settle()
        yield "\n\n" + review_markdown(call) + "\n\n"
        arguments = ask_user_arguments(call)
        if arguments is not None:
            yield ask_user_chunk(self.model_id, call.call_id, arguments)

    async def answer_review(
        self,
        client: AsyncOpenAI,
        store: ChatStore,
        state: ChatState,
        messages: list[dict[str, Any]],
    ) -> AsyncIterator[str | dict[str, Any]]:
        review = state.review
        assert review is not None
        call = review.unanswered()[0]
        answer = card_answer(messages)
        if answer is None:
            turns = turns_of(messages)
            text = turns[-1][0] if turns else ""
            answer = answer_from_text(text, call)
        if not answer:
            # The card was dismissed or timed out: the review stays open for the next message.
            yield (
                "The review is still open: answer "
                + " / ".join(f"`{c}`" for c in call.choices)
                + (" or say what to change" if call.allow_other else "")
                + " in your next message."
            )
            await self.status("Waiting for your review")
            await self.settle()
            return
        if not call.allow_other and answer.lower() not in (c.lower() for c in call.choices):
            yield "A review is waiting: answer " + " or ".join(f"`{c}`" for c in call.choices) + "."
            return
        review = review.answered(call.call_id, answer)
        yield f"Review answered: **{_short(answer, 200)}**\n\n"
        if not review.complete:
            state.review = review
            store.save(self.chat_id, state)
            async for chunk in self.ask(review):
                yield chunk
            return
        state.review = None
        if not state.exchanges:
            state.exchanges.append(Exchange(""))
        store.save(self.chat_id, state)
        async for chunk in self.run(
            client, store, state, review.resume_input(), previous_response_id=review.response_id
        ):
            yield chunk

    # -- client tools: MCP and display_file -------------------------------------------------

    def mcp(self) -> MCPClient:
        http = httpx.AsyncClient(timeout=httpx.Timeout(60.0, connect=5.0))
        return MCPClient.for_gateway(
            http, self.pipe.valves.GATEWAY_URL, self.pipe.valves.GATEWAY_API_KEY
        )

    async def load_mcp_tools(self) -> None:
        extra = tuple(g.strip() for g in self.pipe.valves.MCP_GRAPHS.split(",") if g.strip())
        if not offers_mcp(self.entry, extra):
            return
        if self.owui_tools:
            # The gateway's MCP server, connected as an Open WebUI tool server.
            self.mcp_tools = [
                MCPTool(
                    str(name),
                    str((tool.get("spec") or {}).get("description") or ""),
                    dict((tool.get("spec") or {}).get("parameters") or {}),
                )
                for name, tool in self.owui_tools.items()
                if isinstance(tool, Mapping)
            ]
            return
        client = self.mcp()
        try:
            async with client:
                self.mcp_tools = await client.list_tools()
        except MCPError as exc:
            await self.status(f"The gateway's MCP tools are unavailable: {exc}")
        finally:
            await client.http.aclose()

    async def execute(self, call: Mapping[str, Any]) -> str | tuple[str, str]:
        name = str(call.get("name", ""))
        arguments = str(call.get("arguments", ""))
        if name == DISPLAY_FILE and DISPLAY_FILE in self.entry.client_tools:
            return await self.display_file(arguments)
        if name in {t.name for t in self.mcp_tools}:
            return await self.call_mcp(name, arguments)
        return json.dumps({"error": f"this client does not implement {name!r}"})

    async def call_mcp(self, name: str, arguments: str) -> str:
        await self.status(f"Tool {name}: {_short(arguments)}")
        try:
            parsed = parse_arguments(arguments)
        except MCPError as exc:
            return json.dumps({"error": str(exc)})
        tool = self.owui_tools.get(name)
        if isinstance(tool, Mapping) and callable(tool.get("callable")):
            try:
                value = await tool["callable"](**parsed)
            except Exception as exc:  # a tool server's failure is the graph's to read
                await self.status(f"Tool {name} failed")
                return json.dumps({"error": f"{exc.__class__.__name__}: {exc}"[:500]})
            text = tool_text(value)
            await self.status(f"Tool {name} → {_short(text)}")
            return json.dumps({"result": text[:16_000]})
        client = self.mcp()
        try:
            async with client:
                result = await client.call_tool(name, parsed)
        except MCPError as exc:
            await self.status(f"Tool {name} failed: {exc}")
            return json.dumps({"error": str(exc)})
        finally:
            await client.http.aclose()
        await self.status(f"Tool {name} → {_short(result.text)}")
        return result.as_output()

    async def display_file(self, arguments: str) -> tuple[str, str]:
        file_id = display_file_id(arguments)
        if file_id is None:
            return display_file_output(None, shown=False), ""
        client = self.pipe.openai()
        try:
            meta = await client.files.retrieve(file_id)
            content = (await client.files.content(file_id)).read()
        except APIError as exc:
            log.warning("display_file %s failed: %s", file_id, exc.__class__.__name__)
            return display_file_output(
                None, shown=False
            ), f"\n\n⚠️ The file `{file_id}` could not be downloaded.\n\n"
        finally:
            await client.close()
        name = meta.filename or file_id
        return display_file_output(name, shown=True), "\n\n" + file_markdown(name, content) + "\n\n"

    # -- files ---------------------------------------------------------------------------------

    async def upload_files(
        self, client: AsyncOpenAI, state: ChatState, files: Sequence[Mapping[str, Any]]
    ) -> list[str]:
        """New attachments go to the Files service through the gateway, once each."""
        if self.entry.limited:
            return []
        new: list[str] = []
        for attached in files:
            local = attachment(attached)
            if local is None or local.owui_id in state.files:
                continue
            data = await asyncio.to_thread(local.path.read_bytes)
            uploaded = await client.files.create(
                file=(local.name, data, local.mime), purpose="user_data"
            )
            state.files[local.owui_id] = uploaded.id
            new.append(uploaded.id)
            await self.status(f"Attached {local.name} for the graph")
        return new

    # -- background graphs ---------------------------------------------------------------------

    async def background(
        self, client: AsyncOpenAI, store: ChatStore, state: ChatState, input_items: list[Item]
    ) -> AsyncIterator[str | dict[str, Any]]:
        """``background=true`` with an Idempotency-Key; progress as status lines while polling."""
        key = str(uuid.uuid4())
        metadata = self.metadata()
        options: dict[str, Any] = {"metadata": metadata} if metadata else {}
        try:
            created = await client.responses.create(
                model=self.entry.model,
                input=cast(Any, input_items),
                background=True,
                extra_headers={"Idempotency-Key": key},
                **options,
            )
        except APIStatusError as exc:
            yield f"⚠️ {gateway_error(exc)}"
            return
        state.background = {"response_id": created.id, "key": key}
        store.save(self.chat_id, state)
        started = time.monotonic()
        shown = 0
        snapshot: dict[str, Any] = {}
        try:
            while True:
                response = await client.responses.retrieve(created.id)
                snapshot = response.model_dump(mode="json", exclude_unset=True)
                notes = commentary_texts(snapshot.get("output") or [])
                for note in notes[shown:]:
                    await self.status(_short(note, 300))
                shown = len(notes)
                status = str(snapshot.get("status", "queued"))
                if status in TERMINAL:
                    break
                if not notes:
                    elapsed = int(time.monotonic() - started)
                    await self.emit(status_event(f"Background run {status} ({elapsed} s)"))
                await asyncio.sleep(self.pipe.valves.POLL_INTERVAL)
        except asyncio.CancelledError:
            # The person pressed Stop: the run stops too.
            with contextlib.suppress(APIError):
                await client.responses.cancel(created.id)
            raise
        except APIStatusError as exc:
            yield f"⚠️ {gateway_error(exc)}"
            return
        result = finished(snapshot)
        state.background = None
        if result.outcome in ("completed", "incomplete"):
            state.exchanges[-1].items.extend(result.output)
        store.save(self.chat_id, state)
        text = answer_text(result.output)
        if text:
            yield text
        for citation in citations_of(result.output):
            await self.emit(source_event(citation))
        note = outcome_note(result)
        if note:
            yield note
        await self.status(f"Background run {result.outcome}")
        await self.settle()


@dataclass(frozen=True)
class Attachment:
    owui_id: str
    name: str
    path: Path
    mime: str


def attachment(item: Mapping[str, Any]) -> Attachment | None:
    """A file Open WebUI stored for this chat (``__files__`` entry), or ``None``."""
    inner = item.get("file") if isinstance(item.get("file"), Mapping) else {}
    assert isinstance(inner, Mapping)
    owui_id = item.get("id") or inner.get("id")
    path = inner.get("path") or item.get("path")
    if not isinstance(owui_id, str) or not isinstance(path, str) or not path:
        return None
    meta = inner.get("meta") if isinstance(inner.get("meta"), Mapping) else {}
    assert isinstance(meta, Mapping)
    name = str(item.get("name") or inner.get("filename") or meta.get("name") or Path(path).name)
    mime = str(meta.get("content_type") or "application/octet-stream")
    if name.lower().endswith(".md"):
        mime = "text/markdown"
    return Attachment(owui_id, name, Path(path), mime)


def file_markdown(name: str, content: bytes) -> str:
    """A displayed file in the chat: an image inline, text as a preview."""
    import base64
    import mimetypes

    mime = "text/markdown" if name.lower().endswith(".md") else mimetypes.guess_type(name)[0]
    if mime and mime.startswith("image/"):
        data = base64.b64encode(content).decode()
        return f"**{name}**\n\n![{name}](data:{mime};base64,{data})"
    if mime in ("text/markdown", "text/csv", "text/plain"):
        text = content.decode("utf-8", errors="replace")[:4000]
        fence = "csv" if mime == "text/csv" else "markdown"
        return f"**{name}**\n\n```{fence}\n{text}\n```"
    return f"**{name}** ({len(content)} bytes)"
