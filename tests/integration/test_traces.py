"""The spans of real runs, collected by OpenTelemetry's in-memory exporter: LGOS in-process,
its graphs calling the real offline-model and SearXNG.

One trace per request continuing the caller's ``traceparent``: the HTTP server span, under it
``invoke_workflow <graph>`` (with the conversation id), under that each ``chat <model>`` and
``execute_tool <name>``. The run span is current while the graph runs and a tool's span while
the tool runs, so spans graph code makes and the ``traceparent`` it sends are theirs, also for
tool calls run in parallel.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import logging
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from langchain_core.callbacks import CallbackManager
from langchain_core.outputs import LLMResult
from langchain_core.runnables import RunnableConfig
from lgos.runtime.metering import RunMeter
from lgos.runtime.usage import RunObserver
from openai import AsyncOpenAI
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from tests.support.clients import embedded_lgos
from tests.support.graphs import SCRIPTED_TEXT, SENT_TRACEPARENT, TRACED_SIDES

CALLER_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
CALLER_SPAN = "00f067aa0ba902b7"
TRACEPARENT = f"00-{CALLER_TRACE}-{CALLER_SPAN}-01"

_EXPORTER = InMemorySpanExporter()


@pytest.fixture(scope="module")
def spans() -> InMemorySpanExporter:
    """This process's spans (the global provider can be set once per process)."""
    if not isinstance(trace.get_tracer_provider(), TracerProvider):
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(_EXPORTER))
        trace.set_tracer_provider(provider)
    return _EXPORTER


@pytest.fixture
async def lgos(
    in_process_graphs: None, spans: InMemorySpanExporter, tmp_path: Path
) -> AsyncIterator[AsyncOpenAI]:
    spans.clear()
    async with embedded_lgos(tmp_path) as sdk:
        yield sdk


def tree(spans: tuple[ReadableSpan, ...]) -> dict[str, list[ReadableSpan]]:
    by_name: dict[str, list[ReadableSpan]] = {}
    for span in spans:
        by_name.setdefault(span.name, []).append(span)
    return by_name


def parent_of(span: ReadableSpan) -> int | None:
    return span.parent.span_id if span.parent is not None else None


async def test_a_research_run_is_one_trace_under_the_callers(
    lgos: AsyncOpenAI, spans: InMemorySpanExporter
) -> None:
    response = await lgos.responses.create(
        model="advanced-graph",
        input="Search the web for LangGraph streaming modes.",
        tools=[{"type": "web_search"}],
        metadata={"conversation_id": "conv-42"},
        extra_headers={"traceparent": TRACEPARENT},
    )
    assert [item.type for item in response.output] == ["web_search_call", "message"]
    finished = spans.get_finished_spans()
    named = tree(finished)
    assert {format(s.context.trace_id, "032x") for s in finished} == {CALLER_TRACE}
    [server] = named["POST /v1/responses"]
    assert server.kind == trace.SpanKind.SERVER
    assert format(parent_of(server) or 0, "016x") == CALLER_SPAN
    assert server.attributes is not None and server.attributes["http.response.status_code"] == 200
    [run] = named["invoke_workflow advanced-graph"]
    assert parent_of(run) == server.context.span_id
    assert run.attributes is not None
    assert run.attributes["gen_ai.operation.name"] == "invoke_workflow"
    assert run.attributes["gen_ai.conversation.id"] == "conv-42"
    chats = [s for s in finished if s.name.startswith("chat ")]
    assert len(chats) >= 2  # the routing classification, then the answer
    for chat in chats:
        attrs = chat.attributes or {}
        assert parent_of(chat) == run.context.span_id
        assert chat.name == f"chat {attrs['gen_ai.request.model']}"
        assert attrs["gen_ai.operation.name"] == "chat"
        assert attrs["gen_ai.provider.name"] == "openai"
        assert attrs["gen_ai.usage.input_tokens"] > 0 and attrs["gen_ai.usage.output_tokens"] > 0
        assert attrs["gen_ai.response.id"]
    # The web search runs as a tool of the research subgraph, under the run span.
    [search] = named["execute_tool web_search"]
    assert parent_of(search) == run.context.span_id
    # No message content in any span.
    dumped = json.dumps([dict(s.attributes or {}) for s in finished], default=str)
    assert "streaming modes" not in dumped


async def test_a_metrics_scrape_is_not_traced_but_a_health_check_is(
    lgos: AsyncOpenAI, spans: InMemorySpanExporter
) -> None:
    # Absolute URLs: both routes are outside /v1.
    scrape = await lgos.get("http://lgos.test/metrics", cast_to=httpx.Response)
    assert scrape.status_code == 200 and "http_server_requests_total" in scrape.text
    await lgos.get("http://lgos.test/health", cast_to=httpx.Response)
    assert [s.name for s in spans.get_finished_spans()] == ["GET /health"]


async def test_tools_get_their_own_spans(lgos: AsyncOpenAI, spans: InMemorySpanExporter) -> None:
    await lgos.responses.create(
        model="server-tools", input="web search anything", tools=[{"type": "web_search"}]
    )
    finished = spans.get_finished_spans()
    [run] = tree(finished)["invoke_workflow server-tools"]
    tools = [s for s in finished if s.name.startswith("execute_tool ")]
    assert tools, [s.name for s in finished]
    for tool in tools:
        attrs = tool.attributes or {}
        assert tool.name == f"execute_tool {attrs['gen_ai.tool.name']}"
        assert attrs["gen_ai.operation.name"] == "execute_tool"
        assert parent_of(tool) == run.context.span_id


async def test_a_background_run_joins_the_submitting_requests_trace(
    lgos: AsyncOpenAI, spans: InMemorySpanExporter, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DEMO_API_REPORT_STEP_SECONDS", "0.05")
    queued = await lgos.responses.create(
        model="background-report",
        input="report",
        background=True,
        extra_headers={"traceparent": TRACEPARENT},
    )
    while queued.status in ("queued", "in_progress"):
        await asyncio.sleep(0.05)
        queued = await lgos.responses.retrieve(queued.id)
    assert queued.status == "completed"
    named = tree(spans.get_finished_spans())
    [submit] = [
        s for s in named["POST /v1/responses"] if format(s.context.trace_id, "032x") == CALLER_TRACE
    ]
    assert [e.name for e in submit.events] == ["lgos.background.queued"]
    [run] = named["invoke_workflow background-report"]
    assert format(run.context.trace_id, "032x") == CALLER_TRACE
    assert parent_of(run) == submit.context.span_id


def overlap(a: ReadableSpan, b: ReadableSpan) -> bool:
    assert a.start_time and a.end_time and b.start_time and b.end_time
    return a.start_time < b.end_time and b.start_time < a.end_time


@pytest.mark.parametrize("stream", [False, True], ids=["invoked", "streamed"])
async def test_parallel_tool_calls_each_parent_what_they_do(
    lgos: AsyncOpenAI,
    spans: InMemorySpanExporter,
    caplog: pytest.LogCaptureFixture,
    stream: bool,
) -> None:
    caplog.set_level(logging.WARNING)
    if stream:
        events = await lgos.responses.create(
            model="traced-tools",
            input="look both up",
            stream=True,
            extra_headers={"traceparent": TRACEPARENT},
        )
        async for event in events:
            if event.type == "response.completed":
                assert event.response.output_text == SCRIPTED_TEXT
    else:
        response = await lgos.responses.create(
            model="traced-tools", input="look both up", extra_headers={"traceparent": TRACEPARENT}
        )
        assert response.output_text == SCRIPTED_TEXT
    finished = spans.get_finished_spans()
    named = tree(finished)
    [run] = named["invoke_workflow traced-tools"]
    tools = named["execute_tool traced_lookup"]
    assert len(tools) == 2 and overlap(*tools)  # both in flight at once
    by_call = {(t.attributes or {})["gen_ai.tool.call.id"]: t for t in tools}
    assert sorted(by_call) == [f"call_{side}" for side in TRACED_SIDES]
    for side in TRACED_SIDES:
        tool = by_call[f"call_{side}"]
        assert parent_of(tool) == run.context.span_id
        # The tool's own span, its model call and the traceparent it sent: all the tool's.
        [lookup] = named[f"lookup {side}"]
        assert parent_of(lookup) == tool.context.span_id
        sent = str((lookup.attributes or {})[SENT_TRACEPARENT])
        assert sent == f"00-{CALLER_TRACE}-{tool.context.span_id:016x}-01"
        [asked] = [s for s in named["chat"] if parent_of(s) == tool.context.span_id]
        assert (asked.attributes or {})["gen_ai.operation.name"] == "chat"
    # The answer's model call is the run's; no span is left current in the caller.
    [answered] = [s for s in named["chat"] if parent_of(s) == run.context.span_id]
    assert answered.attributes is not None
    assert not trace.get_current_span().get_span_context().is_valid
    assert not [r for r in caplog.records if "detach" in r.getMessage()]


async def test_a_run_cancelled_in_parallel_tools_ends_their_spans_and_leaves_no_context(
    lgos: AsyncOpenAI, spans: InMemorySpanExporter, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    request = asyncio.create_task(
        lgos.responses.create(
            model="traced-tools-held",
            input="look both up",
            extra_headers={"traceparent": TRACEPARENT},
        )
    )
    # Each tool's own span ends just before it starts holding: then both are in flight.
    deadline = asyncio.get_running_loop().time() + 30
    while len([s for s in spans.get_finished_spans() if s.name.startswith("lookup ")]) < 2:
        assert asyncio.get_running_loop().time() < deadline and not request.done()
        await asyncio.sleep(0.05)
    request.cancel()  # as a client leaving does: the request's task is cancelled
    with pytest.raises(asyncio.CancelledError):
        await request
    named = tree(spans.get_finished_spans())
    [run] = named["invoke_workflow traced-tools-held"]
    assert (run.attributes or {})["lgos.run.outcome"] == "cancelled"
    tools = named["execute_tool traced_lookup"]
    assert len(tools) == 2
    for tool in tools:
        assert parent_of(tool) == run.context.span_id
        assert (tool.attributes or {})["error.type"] == "CancelledError"
    assert not trace.get_current_span().get_span_context().is_valid
    assert not [r for r in caplog.records if "detach" in r.getMessage()]


def test_spans_ride_on_the_run_observer_one_handler_per_streamed_token(
    spans: InMemorySpanExporter,
) -> None:
    # LangChain dispatches every streamed token to every handler: tracing adds none.
    observer = RunObserver()
    config: RunnableConfig = {"callbacks": [observer], "metadata": {}}
    assert observer.ignore_chain and observer.ignore_agent  # untraced: no chain or tool events
    with RunMeter("simple-graph", config):
        assert config["callbacks"] == [observer]
        assert not observer.ignore_agent
        # Chain events only while a tool's span is open (the next test shows why then).
        assert observer.ignore_chain


def test_a_model_under_a_chain_inside_a_tool_is_the_tools_child_even_out_of_its_context(
    spans: InMemorySpanExporter,
) -> None:
    spans.clear()
    observer = RunObserver()
    config: RunnableConfig = {"callbacks": [observer], "metadata": {}}
    with RunMeter("simple-graph", config):
        manager = CallbackManager.configure(inheritable_callbacks=[observer])
        graph = manager.on_chain_start({}, {})
        assert observer.ignore_chain
        tool = graph.get_child().on_tool_start({"name": "lookup"}, "query")
        assert not observer.ignore_chain
        inner = tool.get_child().on_chain_start({}, {})
        # Started where the tool's span is not current (a fresh context, as a thread or a task
        # made before the tool started would be): only the chain's record leads to the tool.
        [model] = contextvars.Context().run(
            inner.get_child().on_chat_model_start, {}, [[]], invocation_params={"model": "m"}
        )
        model.on_llm_end(LLMResult(generations=[[]]))
        inner.on_chain_end({})
        tool.on_tool_end("found")
        assert observer.ignore_chain
        graph.on_chain_end({})
    named = tree(spans.get_finished_spans())
    [chat], [lookup] = named["chat m"], named["execute_tool lookup"]
    assert parent_of(chat) == lookup.context.span_id
