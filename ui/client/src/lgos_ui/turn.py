"""One conversational turn through the gateway's Responses API, free of any UI.

A UI builds a :class:`Turn` with its gateway client, the graph's entry, where it keeps the
conversation (:class:`Conversation`) and how it runs MCP tools (:class:`ToolRunner`), then renders
the events the turn yields, in order:

- stream order is kept: commentary and tool activity come where the graph sent them, so they
  precede the answer text that follows them; a UI shows them apart from the answer, a
  Response's commentary as one :class:`~lgos_ui.events.ProgressNotes` block above its answer
  (labelled "Working…" while it runs, collapsed as "How I got there" once it ended);
- a refusal's first delta is preceded by :data:`REFUSED_PREFIX`, as answer text;
- each streamed Response ends with its :class:`~lgos_ui.events.Finished` (sources and outcome
  notes go under that Response's answer), or with a :class:`TurnError` when the request failed;
- a client tool is run between Responses (:class:`ToolCall` … :class:`ToolDone`, or
  :class:`FileShown` for ``display_file``, a warning :class:`Notice` when it cannot be shown);
- a review (:class:`~lgos_ui.review.PendingReview`) is persisted before it is yielded and ends
  the turn;
- a background run is yielded as its :class:`BackgroundRun` once stored, then its progress.

Request options, the tool-round limit, terminal states and the error texts live here once.

Logs: one ``response`` line per Response a turn requested (model, response id, outcome,
duration) and a warning when a request failed, each with the turn's request id: a UI gives
its turn a client built by :func:`request_client`, so the gateway and LGOS log that id too.
Never message text, file contents or keys.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
import uuid
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, cast

from openai import APIError, APIStatusError, AsyncOpenAI

from lgos_ui.catalog import GraphEntry
from lgos_ui.errors import gateway_error_text
from lgos_ui.events import (
    TERMINAL,
    BackgroundFinished,
    BackgroundProgress,
    BackgroundRun,
    FileShown,
    Finished,
    Notice,
    RefusalDelta,
    StreamMapper,
    ToolActivity,
    ToolCall,
    ToolDone,
    TurnError,
    TurnEvent,
    commentary_texts,
    finished,
)
from lgos_ui.ledger import Item, function_calls, function_output
from lgos_ui.mcp import MCPError, MCPTool, ToolResult, parse_arguments
from lgos_ui.review import INTERRUPT_TOOL, PendingReview, pending_review
from lgos_ui.settings import request_metadata
from lgos_ui.tools import (
    DISPLAY_FILE,
    display_file_id,
    display_file_output,
    mime_of,
    offered_tools,
    offers_mcp,
)

log = logging.getLogger("lgos_ui")

MAX_TOOL_ROUNDS = 8
"""Responses one turn may request while the graph keeps calling client tools."""
STOPPING = frozenset({"error", "failed", "cancelled"})
"""Outcomes after which a turn neither stores the output nor answers calls."""
KEPT = frozenset({"completed", "incomplete"})
"""Outcomes whose output joins the conversation's items."""
BACKGROUND_FEATURE = "background"
INTERRUPTS_FEATURE = "interrupts"
REFUSED_PREFIX = "**Refused:** "
KEPT_CALLING = "Stopped: the graph kept calling tools."
NO_FINAL_EVENT = "The stream ended without a final event."


REQUEST_ID_HEADER = "X-Request-Id"


def request_client(client: AsyncOpenAI, request_id: str) -> AsyncOpenAI:
    """``client`` sending ``X-Request-Id: request_id`` on every call (it shares the connection
    pool), so one turn's calls are one id in the gateway's and LGOS's logs."""
    return client.with_options(default_headers={REQUEST_ID_HEADER: request_id})


def gateway_error(exc: APIStatusError) -> str:
    """A status the gateway answered, as the person reads it (never swallowed)."""
    return gateway_error_text(exc.status_code, exc.message, exc.body)


def unreachable(exc: APIError) -> str:
    return f"The gateway could not be reached ({exc.__class__.__name__})."


# -- what a UI provides ---------------------------------------------------------------------------


class Conversation(Protocol):
    """Where a UI keeps a conversation's Responses items, its pending review, its background run."""

    def items(self) -> list[Item]:
        """Every item so far, as a follow-up request replays them."""
        ...

    async def add(self, items: Sequence[Item], review: PendingReview | None = None) -> None:
        """Append ``items`` (as sent or received) and, when given, store the review asked next."""
        ...

    async def save_background(self, run: BackgroundRun | None) -> None: ...


class ToolRunner(Protocol):
    """How a UI reaches the MCP tools it offers (the gateway's endpoint, or its own connection)."""

    async def list_tools(self) -> list[MCPTool]: ...

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> ToolResult: ...


# -- the turn -------------------------------------------------------------------------------------


@dataclass
class Turn:
    client: AsyncOpenAI
    entry: GraphEntry
    conversation: Conversation
    conversation_id: str | None = None
    settings: Mapping[str, Any] = field(default_factory=dict)
    """The person's settings values (only those differing from the defaults travel)."""
    runner: ToolRunner | None = None
    mcp_graphs: Sequence[str] = ()
    """Graphs offered MCP tools beyond those advertising ``mcp_tools``."""
    poll_interval: float = 0.5
    mcp_tools: list[MCPTool] = field(default_factory=list)
    request_id: str | None = None
    """The ``X-Request-Id`` its client sends (:func:`request_client`); on its log lines."""

    def log_fields(self, **fields: Any) -> dict[str, Any]:
        """A log line's fields: the turn's request id and model, then ``fields`` (unset ones are
        left out, so a request id the process bound in its log context stays)."""
        given = {"request_id": self.request_id, "model": self.entry.model, **fields}
        return {k: v for k, v in given.items() if v is not None}

    def log_failure(self, exc: APIError, started: float) -> None:
        status = exc.status_code if isinstance(exc, APIStatusError) else None
        log.warning(
            "response failed",
            extra=self.log_fields(
                http_status=status,
                error=exc.__class__.__name__,
                duration_ms=elapsed_ms(started),
            ),
        )

    def log_finished(self, result: Finished, started: float) -> None:
        log.info(
            "response",
            extra=self.log_fields(
                response_id=result.response_id,
                status=result.outcome,
                duration_ms=elapsed_ms(started),
            ),
        )

    @property
    def runs_in_background(self) -> bool:
        """Background graphs without reviews run with ``background=true`` and are polled."""
        return self.entry.has(BACKGROUND_FEATURE) and not self.entry.has(INTERRUPTS_FEATURE)

    def metadata(self) -> dict[str, str]:
        if self.entry.limited:
            return request_metadata(self.conversation_id)
        return request_metadata(self.conversation_id, self.settings, self.entry.settings_defaults)

    def options(self, previous_response_id: str | None) -> dict[str, Any]:
        """The request's options beyond model and input."""
        options: dict[str, Any] = {}
        tools = offered_tools(self.entry, self.mcp_tools)
        if tools:
            options["tools"] = tools
        if previous_response_id is not None:
            options["previous_response_id"] = previous_response_id
        metadata = self.metadata()
        if metadata:
            options["metadata"] = metadata
        return options

    async def load_tools(self) -> AsyncIterator[TurnEvent]:
        if self.runner is None or not offers_mcp(self.entry, self.mcp_graphs):
            return
        try:
            self.mcp_tools = await self.runner.list_tools()
        except MCPError as exc:
            yield Notice(f"The gateway's MCP tools are unavailable: {exc}")

    async def resume(self, review: PendingReview) -> AsyncIterator[TurnEvent]:
        """Answer a complete review: the paused Response goes on."""
        async for event in self.run(review.resume_input(), review.response_id):
            yield event

    async def run(
        self, input_items: list[Item], previous_response_id: str | None = None
    ) -> AsyncIterator[TurnEvent]:
        """Request, stream, answer client calls, repeat until an answer or a review."""
        async for event in self.load_tools():
            yield event
        # What a follow-up request replays: the whole conversation so far, this turn included.
        ledger = self.conversation.items() if previous_response_id is not None else input_items
        ledger = list(ledger)
        for _ in range(MAX_TOOL_ROUNDS):
            result: Finished | None = None
            async for event in self.stream(input_items, previous_response_id):
                if isinstance(event, Finished):
                    result = event
                yield event
            if result is None or result.outcome in STOPPING:
                return
            # An answered review's outputs join the conversation as sent.
            added = [*(input_items if previous_response_id is not None else []), *result.output]
            ledger.extend(added)
            review = pending_review(result.response_id or "", self.entry.model, result.output)
            await self.conversation.add(added, review)
            if review is not None:
                yield review
                return
            calls = function_calls(result.output, exclude=[INTERRUPT_TOOL])
            if not calls or result.outcome != "completed":
                return
            outputs: list[Item] = []
            for call in calls:
                async for event in self.execute(call, outputs):
                    yield event
            await self.conversation.add(outputs)
            ledger.extend(outputs)
            input_items, previous_response_id = list(ledger), None
        yield TurnError(KEPT_CALLING)

    async def stream(
        self, input_items: list[Item], previous_response_id: str | None
    ) -> AsyncIterator[TurnEvent]:
        """One streamed Response: its events, then its :class:`Finished` (or a TurnError)."""
        mapper = StreamMapper()
        refused = False
        result: Finished | None = None
        started = time.monotonic()
        try:
            # The items are Responses input as the server sent them (plain dicts, kept unchanged).
            stream = cast(
                "AsyncIterator[Any]",
                await self.client.responses.create(
                    model=self.entry.model,
                    input=cast(Any, input_items),
                    stream=True,
                    **self.options(previous_response_id),
                ),
            )
            async for raw in stream:
                for event in mapper.feed(raw.model_dump(mode="json", exclude_unset=True)):
                    if isinstance(event, Finished):
                        result = event
                        continue
                    if isinstance(event, ToolActivity) and event.kind == "function_call":
                        continue  # client calls are shown when they run
                    if isinstance(event, RefusalDelta) and not refused:
                        refused = True
                        yield RefusalDelta(REFUSED_PREFIX)
                    yield event
        except APIStatusError as exc:
            # A 400 (e.g. settings LGOS refused) is shown to the person, never swallowed.
            self.log_failure(exc, started)
            yield TurnError(gateway_error(exc))
            return
        except APIError as exc:
            self.log_failure(exc, started)
            yield TurnError(unreachable(exc))
            return
        result = result or Finished("error", {}, NO_FINAL_EVENT)
        self.log_finished(result, started)
        yield result

    async def execute(
        self, call: Mapping[str, Any], outputs: list[Item]
    ) -> AsyncIterator[TurnEvent]:
        """Run one client call; its ``function_call_output`` is appended to ``outputs``."""
        name = str(call.get("name", ""))
        arguments = str(call.get("arguments", ""))
        call_id = str(call.get("call_id", ""))
        if name == DISPLAY_FILE and DISPLAY_FILE in self.entry.client_tools:
            shown: list[str] = []
            async for event in self.display_file(arguments, shown):
                yield event
            output = display_file_output(shown[0] if shown else None, shown=bool(shown))
        elif self.runner is not None and name in {t.name for t in self.mcp_tools}:
            started = ToolCall(call_id, name, arguments)
            yield started
            try:
                result = await self.runner.call_tool(name, parse_arguments(arguments))
            except MCPError as exc:
                yield ToolDone(started, str(exc), is_error=True, failed=True)
                output = json.dumps({"error": str(exc)})
            else:
                yield ToolDone(started, result.text, is_error=result.is_error)
                output = result.as_output()
        else:
            output = json.dumps({"error": f"this client does not implement {name!r}"})
        outputs.append(function_output(call_id, output))

    async def display_file(self, arguments: str, shown: list[str]) -> AsyncIterator[TurnEvent]:
        """Download the file through the gateway's Files API; its name goes into ``shown``."""
        file_id = display_file_id(arguments)
        if file_id is None:
            return
        try:
            meta = await self.client.files.retrieve(file_id)
            content = (await self.client.files.content(file_id)).read()
        except APIError as exc:
            log.warning(
                "display_file download failed",
                extra=self.log_fields(file_id=file_id, error=exc.__class__.__name__),
            )
            yield Notice(f"The file `{file_id}` could not be downloaded.", warning=True)
            return
        name = meta.filename or file_id
        shown.append(name)
        yield FileShown(file_id, name, mime_of(name), content)

    # -- background runs --------------------------------------------------------------------------

    async def start_background(self, input_items: list[Item]) -> AsyncIterator[TurnEvent]:
        """``background=true`` with an Idempotency-Key; the run is stored before it is polled."""
        key = str(uuid.uuid4())
        metadata = self.metadata()
        options: dict[str, Any] = {"metadata": metadata} if metadata else {}
        started = time.monotonic()
        try:
            created = await self.client.responses.create(
                model=self.entry.model,
                input=cast(Any, input_items),
                background=True,
                extra_headers={"Idempotency-Key": key},
                **options,
            )
        except APIStatusError as exc:
            self.log_failure(exc, started)
            yield TurnError(gateway_error(exc))
            return
        log.info(
            "background run started",
            extra=self.log_fields(
                response_id=created.id, status=created.status, duration_ms=elapsed_ms(started)
            ),
        )
        run = BackgroundRun(created.id, key, self.entry.model)
        await self.conversation.save_background(run)
        yield run

    async def poll_background(self, response_id: str) -> AsyncIterator[TurnEvent]:
        """Progress on every poll until the run ends; its kept output joins the conversation."""
        started = time.monotonic()
        shown = 0
        while True:
            try:
                response = await self.client.responses.retrieve(response_id)
            except APIStatusError as exc:
                self.log_failure(exc, started)
                await self.conversation.save_background(None)
                yield TurnError(gateway_error(exc))
                return
            snapshot = response.model_dump(mode="json", exclude_unset=True)
            notes = commentary_texts(snapshot.get("output") or [])
            status = str(snapshot.get("status", "queued"))
            elapsed = int(time.monotonic() - started)
            yield BackgroundProgress(
                response_id, status, elapsed, tuple(notes), tuple(notes[shown:])
            )
            shown = len(notes)
            if status in TERMINAL:
                break
            await asyncio.sleep(self.poll_interval)
        result = finished(snapshot)
        self.log_finished(result, started)
        await self.conversation.save_background(None)
        if result.outcome in KEPT:
            await self.conversation.add(result.output)
        yield BackgroundFinished(result)

    async def background(self, input_items: list[Item]) -> AsyncIterator[TurnEvent]:
        """Start a background run and poll it to its end."""
        async for event in self.start_background(input_items):
            yield event
            if isinstance(event, BackgroundRun):
                async for progress in self.poll_background(event.response_id):
                    yield progress


def elapsed_ms(started: float) -> float:
    return round((time.monotonic() - started) * 1000, 1)


async def cancel_background(client: AsyncOpenAI, response_id: str) -> TurnError | None:
    """Cancel a background run (the person pressed Cancel or Stop)."""
    try:
        await client.responses.cancel(response_id)
    except APIStatusError as exc:
        return TurnError(gateway_error(exc))
    return None
