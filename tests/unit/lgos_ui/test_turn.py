"""The turn engine through the real OpenAI SDK: a mock HTTP transport answers with real SSE bytes of
Responses streams recorded through the stack's LiteLLM gateway (``streams/*.jsonl``), a Files API
and polled background snapshots, and keeps every request it was given."""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import openai._base_client as sdk_base
import pytest
from lgos_ui.catalog import entry_from_extension
from lgos_ui.events import (
    AnswerDelta,
    BackgroundFinished,
    BackgroundProgress,
    BackgroundRun,
    Commentary,
    FileShown,
    Finished,
    Notice,
    RefusalDelta,
    ToolCall,
    ToolDone,
    TurnError,
    TurnEvent,
)
from lgos_ui.ledger import Item, user_message
from lgos_ui.mcp import MCPError, MCPTool, ToolResult
from lgos_ui.review import PendingReview
from lgos_ui.turn import (
    KEPT_CALLING,
    MAX_TOOL_ROUNDS,
    NO_FINAL_EVENT,
    REFUSED_PREFIX,
    Turn,
    cancel_background,
    request_client,
)
from openai import AsyncOpenAI
from service_kit import context
from service_kit.logs import configure_logging

STREAMS = Path(__file__).parent / "streams"
# The HTTP library this openai version wraps (httpx, or its successor in newer releases).
http = getattr(sdk_base, "httpx2", None) or sdk_base.httpx


def recorded(name: str) -> list[dict[str, Any]]:
    lines = (STREAMS / f"{name}.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def calling(name: str, arguments: str) -> list[dict[str, Any]]:
    """The recorded pause, with its one function call renamed: a graph calling a client tool."""
    text = json.dumps(recorded("interrupt_pause")).replace('"lgos_interrupt"', json.dumps(name))
    events: list[dict[str, Any]] = json.loads(text)
    for event in events:
        items = [event.get("item") or {}, *((event.get("response") or {}).get("output") or [])]
        for item in items:
            if item.get("type") == "function_call":
                item["arguments"] = arguments
    return events


def sse(events: Sequence[dict[str, Any]]) -> bytes:
    return b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events)


def error(status: int, message: str) -> Any:
    return http.Response(status, json={"error": {"message": message, "type": "invalid_request"}})


class FakeGateway:
    """Answers ``POST /v1/responses`` with the next stream (or a response), the Files API from
    ``files`` and background polls from ``snapshots``; keeps every request."""

    def __init__(self, *streams: Any) -> None:
        self.streams = list(streams)
        self.files: dict[str, tuple[str, bytes]] = {}
        self.snapshots: list[dict[str, Any]] = []
        self.requests: list[Any] = []

    def bodies(self, path: str = "/v1/responses") -> list[dict[str, Any]]:
        return [json.loads(r.content) for r in self.requests if r.url.path == path and r.content]

    def handle(self, request: Any) -> Any:
        self.requests.append(request)
        path, method = request.url.path, request.method
        if method == "POST" and path == "/v1/responses":
            if json.loads(request.content).get("background"):
                return http.Response(200, json=self.snapshots.pop(0))
            reply = self.streams.pop(0)
            if not isinstance(reply, list):
                return reply
            return http.Response(
                200, headers={"content-type": "text/event-stream"}, content=sse(reply)
            )
        if method == "GET" and path.startswith("/v1/responses/"):
            return http.Response(200, json=self.snapshots.pop(0))
        if method == "POST" and path.endswith("/cancel"):
            return error(404, "no such response")
        if method == "GET" and path.startswith("/v1/files/"):
            file_id = path.split("/")[3]
            if file_id not in self.files:
                return error(404, "no such file")
            name, content = self.files[file_id]
            if path.endswith("/content"):
                return http.Response(200, content=content)
            return http.Response(
                200,
                json={
                    "id": file_id,
                    "object": "file",
                    "bytes": len(content),
                    "created_at": 0,
                    "filename": name,
                    "purpose": "user_data",
                },
            )
        return error(404, f"unexpected {method} {path}")

    def client(self) -> AsyncOpenAI:
        transport = http.MockTransport(self.handle)
        return AsyncOpenAI(
            base_url="http://gateway.test/v1",
            api_key="sk-test",
            http_client=http.AsyncClient(transport=transport),
            max_retries=0,
        )


class Memory:
    """A conversation kept in memory, recording the order of what was stored."""

    def __init__(self, items: Sequence[Item] = ()) -> None:
        self.stored: list[Item] = [dict(i) for i in items]
        self.reviews: list[PendingReview] = []
        self.runs: list[BackgroundRun | None] = []
        self.log: list[str] = []

    def items(self) -> list[Item]:
        return [dict(i) for i in self.stored]

    async def add(self, items: Sequence[Item], review: PendingReview | None = None) -> None:
        self.stored.extend(dict(i) for i in items)
        self.log.append("add")
        if review is not None:
            self.reviews.append(review)
            self.log.append("review stored")

    async def save_background(self, run: BackgroundRun | None) -> None:
        self.runs.append(run)


class Tools:
    """An MCP runner with one tool that echoes its arguments (or fails)."""

    def __init__(self, fail: bool = False) -> None:
        self.fail = fail
        self.calls: list[tuple[str, dict[str, Any]]] = []

    async def list_tools(self) -> list[MCPTool]:
        if self.fail:
            raise MCPError("tools/list: the MCP endpoint answered 503")
        return [MCPTool("db-execute_sql", "Run SQL", {"type": "object"})]

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> ToolResult:
        self.calls.append((name, arguments))
        return ToolResult(f"rows for {arguments['sql']}", False)


def entry(graph: str = "simple-graph", **lgos: Any) -> Any:
    return entry_from_extension(f"lgos/{graph}", {"description": graph, **lgos})


async def collect(events: AsyncIterator[TurnEvent]) -> list[TurnEvent]:
    return [event async for event in events]


@pytest.fixture
def make_turn() -> Callable[..., tuple[Turn, FakeGateway, Memory]]:
    def make(
        *streams: Any, graph: Any = None, items: Sequence[Item] = (), **options: Any
    ) -> tuple[Turn, FakeGateway, Memory]:
        gateway = FakeGateway(*streams)
        memory = Memory(items)
        turn = Turn(gateway.client(), graph or entry(), memory, poll_interval=0, **options)
        return turn, gateway, memory

    return make


HI = [user_message("Hi")]


async def test_commentary_precedes_the_answer_in_stream_order(make_turn: Any) -> None:
    turn, gateway, memory = make_turn(recorded("status_events"), conversation_id="chat-1")
    events = await collect(turn.run(HI))
    kinds = [type(e).__name__ for e in events]
    first_answer = kinds.index("AnswerDelta")
    assert [e.text for e in events if isinstance(e, Commentary)] == [
        "Reading the question",
        "Drafting the answer",
    ]
    assert max(i for i, k in enumerate(kinds) if k == "Commentary") < first_answer
    assert isinstance(events[-1], Finished) and events[-1].outcome == "completed"
    answer = "".join(e.text for e in events if isinstance(e, AnswerDelta))
    assert answer.startswith("[offline-model") and "Reading the question" not in answer
    (body,) = gateway.bodies()
    assert body["model"] == "lgos/simple-graph" and body["stream"] is True
    assert body["input"] == HI and body["metadata"] == {"conversation_id": "chat-1"}
    assert "tools" not in body and "previous_response_id" not in body
    assert memory.stored == events[-1].output  # the output joins the conversation unchanged


async def test_settings_travel_as_metadata_only_when_they_differ(make_turn: Any) -> None:
    schema = {"properties": {"audience": {"type": "string", "enum": ["general", "expert"]}}}
    graph = entry(client_settings={"json_schema": schema, "defaults": {"audience": "general"}})
    turn, gateway, _ = make_turn(
        recorded("status_events"), graph=graph, settings={"audience": "expert"}
    )
    await collect(turn.run(HI))
    assert gateway.bodies()[0]["metadata"] == {"lgos_settings": '{"audience":"expert"}'}


async def test_a_refusal_is_announced_once_before_its_text(make_turn: Any) -> None:
    turn, _, _ = make_turn(recorded("refusal"))
    refusals = [e.text for e in await collect(turn.run(HI)) if isinstance(e, RefusalDelta)]
    assert refusals == [REFUSED_PREFIX, "I can't help with that request."]


@pytest.mark.parametrize(
    ("stream", "outcome", "message"),
    [
        ("incomplete", "incomplete", "The answer is incomplete (max_output_tokens)."),
        ("failure", "failed", "The graph failed:"),
    ],
)
async def test_unfinished_outcomes_keep_the_partial_answer(
    make_turn: Any, stream: str, outcome: str, message: str
) -> None:
    turn, _, memory = make_turn(recorded(stream))
    events = await collect(turn.run(HI))
    done = events[-1]
    assert isinstance(done, Finished) and done.outcome == outcome
    assert done.message.startswith(message)
    assert any(isinstance(e, AnswerDelta) for e in events)
    # An incomplete answer is part of the conversation; a failed one is not.
    assert bool(memory.stored) is (outcome == "incomplete")


async def test_a_pause_is_stored_before_the_review_is_asked_then_resumed(make_turn: Any) -> None:
    graph = entry("interruptible-approval", features=["interrupts"])
    resumed = recorded("status_events")
    turn, gateway, memory = make_turn(recorded("interrupt_pause"), resumed, graph=graph, items=HI)
    events = await collect(turn.run(HI))
    asked = events[-1]
    assert isinstance(asked, PendingReview) and memory.log == ["add", "review stored"]
    assert memory.reviews == [asked]
    (call,) = asked.calls
    assert call.question.startswith("Approve this change?")
    review = asked.answered(call.call_id, "approve")
    events = await collect(turn.resume(review))
    assert isinstance(events[-1], Finished) and events[-1].outcome == "completed"
    body = gateway.bodies()[-1]
    assert body["previous_response_id"] == review.response_id
    assert body["input"] == [
        {"type": "function_call_output", "call_id": call.call_id, "output": "approve"}
    ]
    # The interrupt exchange stays in the conversation: call, answer, then the resumed output.
    kinds = [i.get("type", "message") for i in memory.stored]
    assert kinds[:3] == ["message", "function_call", "function_call_output"]


async def test_display_file_downloads_through_the_gateway_and_answers_the_call(
    make_turn: Any,
) -> None:
    graph = entry("display-file", client_tools=["display_file"])
    shown = calling("display_file", '{"file_id": "file-chart"}')
    missing = calling("display_file", '{"file_id": "file-gone"}')
    turn, gateway, _ = make_turn(shown, missing, recorded("status_events"), graph=graph)
    gateway.files["file-chart"] = ("word-lengths.png", b"\x89PNG")
    events = await collect(turn.run(HI))
    (file,) = [e for e in events if isinstance(e, FileShown)]
    assert (file.name, file.mime, file.content) == ("word-lengths.png", "image/png", b"\x89PNG")
    (gone,) = [e for e in events if isinstance(e, Notice)]
    assert gone == Notice("The file `file-gone` could not be downloaded.", warning=True)
    first, second, third = gateway.bodies()
    assert first["tools"][0]["name"] == "display_file"
    answered = second["input"][-1]
    assert answered["type"] == "function_call_output"
    assert json.loads(answered["output"]) == {"status": "displayed", "filename": "word-lengths.png"}
    assert json.loads(third["input"][-1]["output"])["status"] == "not_displayed"
    # Each follow-up replays the whole conversation: the user, the call, its output, ...
    assert third["input"][: len(second["input"])] == second["input"]
    assert "previous_response_id" not in second


async def test_mcp_calls_run_through_the_runner_and_show_their_result(make_turn: Any) -> None:
    graph = entry(features=["mcp_tools"])
    query = calling("db-execute_sql", '{"sql": "SELECT 1"}')
    tools = Tools()
    turn, gateway, _ = make_turn(query, recorded("status_events"), graph=graph, runner=tools)
    events = await collect(turn.run(HI))
    call = next(e for e in events if isinstance(e, ToolCall))
    done = next(e for e in events if isinstance(e, ToolDone))
    assert events.index(call) < events.index(done)
    assert done.call == call and (done.text, done.failed) == ("rows for SELECT 1", False)
    assert tools.calls == [("db-execute_sql", {"sql": "SELECT 1"})]
    first, second = gateway.bodies()
    assert first["tools"][0]["name"] == "db-execute_sql"
    assert json.loads(second["input"][-1]["output"]) == {"result": "rows for SELECT 1"}


async def test_unparseable_arguments_and_unknown_tools_answer_with_an_error(
    make_turn: Any,
) -> None:
    graph = entry(features=["mcp_tools"])
    broken = calling("db-execute_sql", "{not json")
    unknown = calling("launch_rocket", "{}")
    turn, gateway, _ = make_turn(
        broken, unknown, recorded("status_events"), graph=graph, runner=Tools()
    )
    events = await collect(turn.run(HI))
    done = next(e for e in events if isinstance(e, ToolDone))
    assert done.failed and done.is_error and "not JSON" in done.text
    outputs = [json.loads(b["input"][-1]["output"]) for b in gateway.bodies()[1:]]
    assert outputs == [
        {"error": "the call's arguments are not JSON"},
        {"error": "this client does not implement 'launch_rocket'"},
    ]


async def test_unavailable_mcp_tools_are_a_notice_and_the_turn_goes_on(make_turn: Any) -> None:
    graph = entry(features=["mcp_tools"])
    turn, gateway, _ = make_turn(recorded("status_events"), graph=graph, runner=Tools(fail=True))
    events = await collect(turn.run(HI))
    assert events[0] == Notice(
        "The gateway's MCP tools are unavailable: tools/list: the MCP endpoint answered 503"
    )
    assert isinstance(events[-1], Finished) and "tools" not in gateway.bodies()[0]


async def test_a_graph_that_keeps_calling_tools_is_stopped(make_turn: Any) -> None:
    graph = entry("display-file", client_tools=["display_file"])
    streams = [calling("display_file", "{}") for _ in range(MAX_TOOL_ROUNDS)]
    turn, gateway, _ = make_turn(*streams, graph=graph)
    events = await collect(turn.run(HI))
    assert events[-1] == TurnError(KEPT_CALLING)
    assert len(gateway.bodies()) == MAX_TOOL_ROUNDS


async def test_gateway_errors_are_shown_with_the_envelopes_message(make_turn: Any) -> None:
    refused = error(400, "lgos_settings: audience must be one of general, expert")
    turn, _, memory = make_turn(refused)
    events = await collect(turn.run(HI))
    message = "lgos_settings: audience must be one of general, expert"
    assert events == [TurnError(f"The gateway answered 400: {message}")]
    assert memory.stored == []


async def test_an_unreachable_gateway_and_a_cut_stream_say_so(make_turn: Any) -> None:
    def refuse(request: Any) -> Any:
        raise http.ConnectError("connection refused", request=request)

    turn, gateway, _ = make_turn()
    gateway.handle = refuse  # type: ignore[method-assign]
    turn.client = gateway.client()
    (failed,) = await collect(turn.run(HI))
    assert failed == TurnError("The gateway could not be reached (APIConnectionError).")
    cut = recorded("status_events")[:-1]
    turn, _, _ = make_turn(cut)
    events = await collect(turn.run(HI))
    assert events[-1] == Finished("error", {}, NO_FINAL_EVENT)


def snapshot(status: str, *notes: str, answer: str = "") -> dict[str, Any]:
    output = [
        {
            "type": "message",
            "id": f"msg_{i}",
            "role": "assistant",
            "phase": "commentary",
            "content": [{"type": "output_text", "text": note, "annotations": []}],
        }
        for i, note in enumerate(notes)
    ]
    if answer:
        output.append(
            {
                "type": "message",
                "id": "msg_answer",
                "role": "assistant",
                "content": [{"type": "output_text", "text": answer, "annotations": []}],
            }
        )
    return {
        "id": "resp_bg",
        "object": "response",
        "created_at": 0,
        "model": "lgos/background-report",
        "status": status,
        "output": output,
    }


async def test_a_background_run_is_stored_polled_and_its_report_kept(make_turn: Any) -> None:
    graph = entry("background-report", features=["background"])
    turn, gateway, memory = make_turn(graph=graph, conversation_id="chat-1")
    assert turn.runs_in_background
    gateway.snapshots = [
        snapshot("queued"),
        snapshot("in_progress"),
        snapshot("in_progress", "Collecting sources"),
        snapshot("completed", "Collecting sources", "Writing", answer="The report."),
    ]
    events = await collect(turn.background(HI))
    started = events[0]
    assert isinstance(started, BackgroundRun) and started.response_id == "resp_bg"
    (created,) = [r for r in gateway.requests if r.method == "POST"]
    assert created.headers["Idempotency-Key"] == started.key
    assert json.loads(created.content)["background"] is True
    progress = [e for e in events if isinstance(e, BackgroundProgress)]
    assert [(p.status, p.new) for p in progress] == [
        ("in_progress", ()),
        ("in_progress", ("Collecting sources",)),
        ("completed", ("Writing",)),
    ]
    assert progress[-1].terminal and not progress[0].terminal
    done = events[-1]
    assert isinstance(done, BackgroundFinished) and done.result.outcome == "completed"
    assert memory.runs == [started, None]
    assert [i["id"] for i in memory.stored] == ["msg_0", "msg_1", "msg_answer"]


async def test_a_cancelled_background_run_keeps_nothing_and_a_failed_cancel_says_why(
    make_turn: Any,
) -> None:
    graph = entry("background-report", features=["background"])
    turn, gateway, memory = make_turn(graph=graph)
    gateway.snapshots = [snapshot("queued"), snapshot("cancelled", "Collecting sources")]
    events = await collect(turn.background(HI))
    done = events[-1]
    assert isinstance(done, BackgroundFinished) and done.result.outcome == "cancelled"
    assert memory.stored == [] and memory.runs[-1] is None
    failed = await cancel_background(turn.client, "resp_bg")
    assert failed == TurnError("The gateway answered 404: no such response")


async def test_graphs_with_reviews_never_run_in_the_background(make_turn: Any) -> None:
    graph = entry("interruptible-approval", features=["background", "interrupts"])
    turn, _, _ = make_turn(graph=graph)
    assert not turn.runs_in_background


# -- request ids and log lines --------------------------------------------------------------------

PROMPT = "wombat-prompt-7731"


@pytest.fixture
def turn_log(
    capsys: pytest.CaptureFixture[str],
) -> Iterator[Callable[[], Callable[[], list[dict[str, Any]]]]]:
    """Configures lgos_ui's lines as both UIs do (service_kit's JSON on stderr) when called in a
    test; returns the reader of those lines."""
    logger = logging.getLogger("lgos_ui")
    saved = (logger.handlers[:], logger.level, logger.propagate)

    def read() -> list[dict[str, Any]]:
        err = capsys.readouterr().err
        assert PROMPT not in err and "sk-test" not in err
        # Only service_kit's lines: another test's leftover handler may complain here too.
        return [json.loads(line) for line in err.splitlines() if line.startswith('{"ts"')]

    def start() -> Callable[[], list[dict[str, Any]]]:
        configure_logging("info", "lgos_ui")
        return read

    yield start
    logger.handlers[:], logger.level, logger.propagate = saved


async def test_every_call_of_a_turn_sends_its_request_id_and_each_response_is_logged(
    make_turn: Any, turn_log: Any
) -> None:
    read = turn_log()
    arguments = json.dumps({"file_id": "file-chart"})
    graph = entry(client_tools=["display_file"])
    turn, gateway, _ = make_turn(calling("display_file", arguments), recorded("status_events"))
    gateway.files["file-chart"] = ("chart.png", b"\x89PNG")
    turn.client = request_client(turn.client, "req_turn-1")
    turn.request_id, turn.entry = "req_turn-1", graph
    await collect(turn.run([user_message(PROMPT)]))
    paths = [r.url.path for r in gateway.requests]
    assert paths.count("/v1/responses") == 2 and "/v1/files/file-chart/content" in paths
    assert {r.headers["X-Request-Id"] for r in gateway.requests} == {"req_turn-1"}
    first, second = read()
    for line in (first, second):
        assert list(line)[:4] == ["ts", "level", "logger", "event"]
        assert line["logger"] == "lgos_ui" and line["event"] == "response"
        assert line["request_id"] == "req_turn-1" and line["model"] == "lgos/simple-graph"
        assert line["duration_ms"] >= 0
    assert first["status"] == "completed" and second["status"] == "completed"
    assert first["response_id"] != second["response_id"]


async def test_a_refused_or_unreachable_request_is_a_warning_without_its_message(
    make_turn: Any, turn_log: Any
) -> None:
    read = turn_log()
    turn, _, _ = make_turn(error(400, f"bad settings for {PROMPT}"), request_id="req_turn-2")
    await collect(turn.run([user_message(PROMPT)]))
    [line] = read()
    assert line["level"] == "warning" and line["event"] == "response failed"
    assert line["request_id"] == "req_turn-2" and line["http_status"] == 400
    assert line["error"] == "BadRequestError"
    with context.bound(request_id="req_bound"):
        unset, _, _ = make_turn(error(503, "down"))
        await collect(unset.run(HI))
    [line] = read()
    assert line["request_id"] == "req_bound"  # a turn without an id keeps the bound one


async def test_a_background_run_logs_its_start_and_its_end(make_turn: Any, turn_log: Any) -> None:
    read = turn_log()
    graph = entry("background-report", features=["background"])
    turn, gateway, _ = make_turn(graph=graph, request_id="req_turn-3")
    gateway.snapshots = [snapshot("queued"), snapshot("completed", answer="The report.")]
    await collect(turn.background([user_message(PROMPT)]))
    started, ended = read()
    assert (started["event"], started["status"]) == ("background run started", "queued")
    assert (ended["event"], ended["status"]) == ("response", "completed")
    assert started["response_id"] == ended["response_id"] == "resp_bg"
    assert {started["request_id"], ended["request_id"]} == {"req_turn-3"}
