"""Graphs that exist only for tests, served beside the demo graphs.

``lgos serve tests.support.graphs:create_registry`` serves the same registry over a socket.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Annotated, Any, TypedDict

import httpx
import orjson
from langchain_core.exceptions import ContextOverflowError
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import tool
from langchain_openai import custom_tool
from langgraph.config import get_stream_writer
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.graph.message import add_messages
from langgraph.prebuilt import ToolNode
from langgraph.runtime import Runtime
from langgraph.types import interrupt
from lgos import (
    ClientSettings,
    GraphConfig,
    GraphFeature,
    GraphRegistry,
    GraphRequest,
    status_event,
)
from lgos.errors import InvalidRequestError
from lgos.testing import ScriptedFakeChatModel
from lgos_demo_graphs.registry import create_registry as demo_registry
from opentelemetry.trace import SpanKind
from pydantic import Field
from service_kit import tracing
from service_kit.context import inject_httpx

SCRIPTED_TEXT = "Hello from the scripted model, piece by piece."
PRIVATE_TEXT = "PRIVATE-SELECTION-NOTES"
SECRET = "secret-detail-4711"
ANSWER_USAGE = {"input_tokens": 3, "output_tokens": 5, "total_tokens": 8}
PRIVATE_USAGE = {"input_tokens": 1, "output_tokens": 2, "total_tokens": 3}


def _chain(state: Any, *nodes: tuple[str, Any], context_schema: Any = None) -> Any:
    """A graph whose ``(name, node)`` pairs run one after the other."""
    builder = StateGraph(state, context_schema=context_schema)
    previous = START
    for name, node in nodes:
        builder.add_node(name, node)
        builder.add_edge(previous, name)
        previous = name
    return builder.compile()


def _single_node(fn: Any, context_schema: Any = None) -> Any:
    return _chain(MessagesState, ("node", fn), context_schema=context_schema)


class EchoSettings(ClientSettings):
    flag: bool = False
    nested: dict[str, int] = Field(default_factory=lambda: {"a": 1, "b": 2})


def _echo_request(request: GraphRequest) -> dict[str, Any]:
    described = [
        {
            "type": m.type,
            "content": m.content,
            "id": m.id,
            "phase": m.additional_kwargs.get("phase"),
            "status": m.response_metadata.get("status"),
        }
        for m in request.messages
    ]
    report = {
        "messages": described,
        "metadata": dict(request.metadata),
        "conversation_id": request.conversation_id,
        "settings": request.settings.model_dump() if request.settings else None,
        "tools": list(request.tools),
        "tool_choice": request.tool_choice,
        "protocol": request.protocol,
    }
    return {"messages": [AIMessage(content=orjson.dumps(report).decode())]}


def echo_graph() -> Any:
    """Answers with a JSON report of the GraphRequest its adapter received."""

    async def node(state: MessagesState) -> dict[str, Any]:
        return {}

    return _single_node(node)


def scripted_graph(*, with_usage: bool = True, delay: float = 0.0) -> Any:
    model = ScriptedFakeChatModel.saying(
        SCRIPTED_TEXT, usage=ANSWER_USAGE if with_usage else None, delay=delay
    )

    async def node(state: MessagesState) -> dict[str, Any]:
        return {"messages": [await model.ainvoke(state["messages"])]}

    return _single_node(node)


def private_then_answer_graph() -> Any:
    """A private (nostream) model call whose message is kept in state, then a public answer."""
    selector = ScriptedFakeChatModel.saying(PRIVATE_TEXT, usage=PRIVATE_USAGE).with_config(
        tags=["nostream"]
    )
    answerer = ScriptedFakeChatModel.saying(SCRIPTED_TEXT, usage=ANSWER_USAGE)

    async def select(state: MessagesState) -> dict[str, Any]:
        return {"messages": [await selector.ainvoke(state["messages"])]}

    async def answer(state: MessagesState) -> dict[str, Any]:
        return {"messages": [await answerer.ainvoke(state["messages"])]}

    return _chain(MessagesState, ("select", select), ("answer", answer))


def custom_data_graph() -> Any:
    model = ScriptedFakeChatModel.saying(SCRIPTED_TEXT)

    async def node(state: MessagesState) -> dict[str, Any]:
        get_stream_writer()({"private_progress": SECRET})
        status_event("Working on it")
        return {"messages": [await model.ainvoke(state["messages"])]}

    return _single_node(node)


def parity_mismatch_graph() -> Any:
    model = ScriptedFakeChatModel.saying("streamed words that differ")

    async def node(state: MessagesState) -> dict[str, Any]:
        return {"messages": [await model.ainvoke(state["messages"])]}

    return _single_node(node)


class AnswerState(TypedDict):
    messages: list[Any]
    answer: str


def unstreamed_graph() -> Any:
    """Its answer never appears as a message while streaming: LGOS must emit the final text."""

    async def node(state: AnswerState) -> dict[str, Any]:
        return {"answer": "An answer assembled without any streamed message."}

    return _chain(AnswerState, ("node", node))


def failing_graph(exc: BaseException, *, partial: bool) -> Any:
    model = ScriptedFakeChatModel.saying("A partial answer before the failure")

    async def node(state: MessagesState) -> dict[str, Any]:
        if partial:
            await model.ainvoke(state["messages"])
        raise exc

    return _single_node(node)


class SlowSettings(ClientSettings):
    seconds: float = 1.0


def _append(name: str, line: str) -> None:
    """A line more in marker file ``name``, in the directory LGOS_TEST_MARKERS names (if any)."""
    directory = os.environ.get("LGOS_TEST_MARKERS")
    if directory:
        with Path(directory, name).open("a") as out:
            out.write(line + "\n")


def _marker(name: str) -> None:
    """One line per event, so tests can count how often a run started (never twice)."""
    _append(name, name)


def _count(name: str) -> None:
    """One line more per call: a side effect tests can count (a duplicate run shows as two)."""
    _append(name, "1")


def slow_graph() -> Any:
    """Silent for ``seconds``, then answers; leaves markers so tests can see cancellation, and
    counts ``effect-<input>`` once per finished run."""
    model = ScriptedFakeChatModel.saying(SCRIPTED_TEXT, usage=ANSWER_USAGE)

    async def node(state: MessagesState, runtime: Runtime[SlowSettings]) -> dict[str, Any]:
        key = str(state["messages"][-1].content)
        _marker(f"started-{key}")
        try:
            await asyncio.sleep((runtime.context or SlowSettings()).seconds)
        except asyncio.CancelledError:
            _marker(f"cancelled-{key}")
            raise
        _marker(f"finished-{key}")
        _count(f"effect-{key}")
        return {"messages": [await model.ainvoke(state["messages"])]}

    return _single_node(node, SlowSettings)


def _tenant_context(request: GraphRequest, settings: ClientSettings | None) -> None:
    if "tenant" not in request.metadata:
        raise InvalidRequestError(
            "metadata.tenant is required by this graph.",
            param="metadata.tenant",
            code="tenant_required",
        )


def bad_citation_graph() -> Any:
    """Cites a span that is not in its text block: a graph bug LGOS must not pass on."""

    async def node(state: MessagesState) -> dict[str, Any]:
        block = {
            "type": "text",
            "text": "short",
            "annotations": [
                {
                    "type": "url_citation",
                    "url": "https://example.org/",
                    "title": "x",
                    "start_index": 2,
                    "end_index": 40,
                }
            ],
        }
        return {"messages": [AIMessage(content=[block])]}

    return _single_node(node)


FAKE_RESULT_URL = "https://example.org/langgraph-interrupts"


@custom_tool
def package_version(input: str) -> str:
    """Report a fixed version for any package named in the input."""
    return f"{input.strip()} 1.2.3"


@tool
def web_search(query: str) -> str:
    """A fixed, offline search result (the real tool queries SearXNG)."""
    return f"Result for {query}: {FAKE_RESULT_URL}"


@tool
def internal_lookup(key: str) -> str:
    """A tool the graph uses for itself; never selected by clients."""
    return f"internal {key}"


TRACED_SIDES = ("left", "right")
SENT_TRACEPARENT = "test.sent_traceparent"


def traced_tools_graph(*, hold: float = 0.0) -> Any:
    """Two calls of one tool, run by a ``ToolNode`` in parallel (each waits until the other is in
    flight). Each calls offline-model's health route through the ``inject_httpx`` hook, asks a
    model, then opens a span of its own carrying the ``traceparent`` that call sent; then waits
    ``hold`` seconds."""
    in_flight: list[asyncio.Barrier] = []
    model = ScriptedFakeChatModel.saying("looked up").with_config(tags=["nostream"])

    @tool
    async def traced_lookup(side: str) -> str:
        """Look one side up."""
        async with asyncio.timeout(10):
            await in_flight[-1].wait()
        health = os.environ["DEMO_API_OFFLINE_MODEL_URL"].removesuffix("/v1") + "/health"
        async with httpx.AsyncClient(event_hooks={"request": [inject_httpx]}) as http:
            sent = (await http.get(health)).request.headers.get("traceparent", "")
        await model.ainvoke(side)
        with tracing.current_span(f"lookup {side}", SpanKind.INTERNAL, {SENT_TRACEPARENT: sent}):
            await asyncio.sleep(0)
        await asyncio.sleep(hold)
        return f"{side} looked up"

    tools = ToolNode([traced_lookup])
    answerer = ScriptedFakeChatModel.saying(SCRIPTED_TEXT)

    async def select(state: MessagesState) -> dict[str, Any]:
        calls = [
            {"id": f"call_{side}", "name": "traced_lookup", "args": {"side": side}}
            for side in TRACED_SIDES
        ]
        return {"messages": [AIMessage(content="", tool_calls=calls)]}

    async def run_tools(state: MessagesState) -> dict[str, Any]:
        in_flight.append(asyncio.Barrier(len(TRACED_SIDES)))
        result: dict[str, Any] = await tools.ainvoke(state)
        return result

    async def answer(state: MessagesState) -> dict[str, Any]:
        return {"messages": [await answerer.ainvoke(state["messages"])]}

    return _chain(MessagesState, ("select", select), ("tools", run_tools), ("answer", answer))


class ToolContext(TypedDict):
    selected: list[str]


def _tool_context(request: GraphRequest, settings: ClientSettings | None) -> ToolContext:
    return {"selected": list(request.server_tools)}


def server_tool_graph(*, repeat_ids: bool = False, run_tools: bool = True) -> Any:
    """Calls every selected server tool (plus one private tool) once, then streams an answer."""
    tools = {"package_version": package_version, "web_search": web_search}
    answerer = ScriptedFakeChatModel.saying(SCRIPTED_TEXT)

    async def select(state: MessagesState, runtime: Runtime[ToolContext]) -> dict[str, Any]:
        selected = (runtime.context or {"selected": []})["selected"]
        calls = [
            {
                "id": "call_same" if repeat_ids else f"call_{name}",
                "name": name,
                "args": {"__arg1": "langgraph"} if name == "package_version" else {"query": "lg"},
            }
            for name in selected
        ]
        calls.append({"id": "call_internal", "name": "internal_lookup", "args": {"key": "k"}})
        return {"messages": [AIMessage(content="", tool_calls=calls)]}

    async def answer(state: MessagesState) -> dict[str, Any]:
        return {"messages": [await answerer.ainvoke(state["messages"])]}

    tool_nodes = [("tools", ToolNode([*tools.values(), internal_lookup]))] if run_tools else []
    return _chain(
        MessagesState,
        ("select", select),
        *tool_nodes,
        ("answer", answer),
        context_schema=ToolContext,
    )


def truncated_call_graph() -> Any:
    """A final message cut off by the token limit in the middle of a function call."""

    async def node(state: MessagesState) -> dict[str, Any]:
        message = AIMessage(
            content="",
            invalid_tool_calls=[
                {
                    "type": "invalid_tool_call",
                    "id": "call_cut",
                    "name": "calculate_sum",
                    "args": '{"numbers": [1, 2',
                    "error": None,
                }
            ],
            response_metadata={"finish_reason": "length"},
        )
        return {"messages": [message]}

    return _single_node(node)


class PairState(TypedDict, total=False):
    messages: Annotated[list[Any], add_messages]
    left: str
    right: str


def parallel_interrupts_graph() -> Any:
    """Two parallel nodes, each asking once: one atomic batch of two calls."""

    def left(state: PairState) -> dict[str, Any]:
        return {"left": interrupt({"question": "left?"})}

    def right(state: PairState) -> dict[str, Any]:
        return {"right": interrupt({"question": "right?"})}

    def join(state: PairState) -> dict[str, Any]:
        return {"messages": [AIMessage(content=f"left={state['left']} right={state['right']}")]}

    builder = StateGraph(PairState)
    builder.add_node("left", left)
    builder.add_node("right", right)
    builder.add_node("join", join)
    builder.add_edge(START, "left")
    builder.add_edge(START, "right")
    builder.add_edge(["left", "right"], "join")
    return builder.compile()


def double_interrupt_graph() -> Any:
    """Breaks the rule: one node calls interrupt() twice."""

    def node(state: MessagesState) -> dict[str, Any]:
        first = interrupt({"question": "first?"})
        second = interrupt({"question": "second?"})
        return {"messages": [AIMessage(content=f"{first} {second}")]}

    return _single_node(node)


class SlowInterruptSettings(ClientSettings):
    seconds: float = 1.5
    fail: bool = False


def slow_after_resume_graph() -> Any:
    """Asks once; after the answer works for ``seconds`` (or fails), then counts
    ``effect-<answer>`` and answers."""

    def ask(state: MessagesState) -> dict[str, Any]:
        return {"messages": [HumanMessage(content=str(interrupt({"question": "go?"})))]}

    async def work(state: MessagesState, runtime: Runtime[SlowInterruptSettings]) -> dict[str, Any]:
        settings = runtime.context or SlowInterruptSettings()
        answer = str(state["messages"][-1].content)
        _marker(f"resumed-{answer}")
        await asyncio.sleep(settings.seconds)
        if settings.fail:
            raise RuntimeError(SECRET)
        _count(f"effect-{answer}")
        return {"messages": [AIMessage(content=f"done after {answer}")]}

    return _chain(MessagesState, ("ask", ask), ("work", work), context_schema=SlowInterruptSettings)


def slow_before_interrupt_graph() -> Any:
    """Works for ``seconds`` (longer than a short lease), then asks once, then answers."""

    async def work(state: MessagesState, runtime: Runtime[SlowInterruptSettings]) -> dict[str, Any]:
        await asyncio.sleep((runtime.context or SlowInterruptSettings()).seconds)
        return {}

    def ask(state: MessagesState) -> dict[str, Any]:
        return {"messages": [AIMessage(content=f"approved: {interrupt({'question': 'go?'})}")]}

    return _chain(MessagesState, ("work", work), ("ask", ask), context_schema=SlowInterruptSettings)


def notes_graph() -> Any:
    """Keeps notes in the deployment's LangGraph Store: 'remember X' adds, anything else lists."""

    async def node(state: MessagesState, runtime: Runtime[None]) -> dict[str, Any]:
        store = runtime.store
        assert store is not None, "LGOS gives every graph its Store"
        text = str(state["messages"][-1].content)
        if text.startswith("remember "):
            note = text.removeprefix("remember ")
            await store.aput(("test-notes",), note, {"text": note})
            reply = f"noted {note}"
        else:
            items = await store.asearch(("test-notes",), limit=100)
            reply = " | ".join(sorted(str(i.value["text"]) for i in items))
        return {"messages": [AIMessage(content=reply)]}

    return _single_node(node)


def subgraph_graph() -> Any:
    """Its only node is a subgraph that publishes a status and streams the answer."""
    model = ScriptedFakeChatModel.saying(SCRIPTED_TEXT)

    async def inner(state: MessagesState) -> dict[str, Any]:
        status_event("Working inside a subgraph")
        get_stream_writer()({"private_progress": SECRET})
        return {"messages": [await model.ainvoke(state["messages"])]}

    return _chain(MessagesState, ("nested", _chain(MessagesState, ("inner", inner))))


class LoopState(TypedDict, total=False):
    messages: Annotated[list[Any], add_messages]
    answers: list[str]


def subgraph_review_loop_graph() -> Any:
    """A subgraph asks, loops back through another node until it hears "done", then answers."""

    def ask(state: LoopState) -> dict[str, Any]:
        answers = [*state.get("answers", []), str(interrupt({"question": "again?"}))]
        return {"answers": answers}

    def again(state: LoopState) -> dict[str, Any]:
        return {}

    def finish(state: LoopState) -> dict[str, Any]:
        return {"messages": [AIMessage(content=" ".join(state["answers"]))]}

    nested = StateGraph(LoopState)
    nested.add_node("ask", ask)
    nested.add_node("again", again)
    nested.add_node("finish", finish)
    nested.add_edge(START, "ask")
    nested.add_conditional_edges(
        "ask", lambda s: "finish" if s["answers"][-1] == "done" else "again", ["again", "finish"]
    )
    nested.add_edge("again", "ask")
    builder = StateGraph(LoopState)
    builder.add_node("review", nested.compile())
    builder.add_edge(START, "review")
    return builder.compile()


INTERRUPTS = frozenset({GraphFeature.INTERRUPTS})
BACKGROUND = frozenset({GraphFeature.BACKGROUND})
TOOL_RUNNER: dict[str, Any] = {
    "server_tools": ["package_version", "web_search"],
    "context_factory": _tool_context,
}


def _config(
    graph: Any, description: str, features: frozenset[GraphFeature] = frozenset(), **options: Any
) -> GraphConfig:
    return GraphConfig(graph=graph, description=description, features=features, **options)


def create_registry() -> GraphRegistry:
    registry = demo_registry()
    tests: dict[str, GraphConfig] = {
        "echo-request": _config(
            echo_graph,
            "Reports the GraphRequest it received.",
            client_settings=EchoSettings,
            request_to_input=_echo_request,
            client_tools=["display_file"],
            server_tools=["package_version", "web_search"],
        ),
        "scripted": _config(scripted_graph, "Scripted fake model."),
        "no-usage": _config(lambda: scripted_graph(with_usage=False), "Reports no usage."),
        "private-then-answer": _config(
            private_then_answer_graph, "A nostream call, then an answer."
        ),
        "custom-data": _config(custom_data_graph, "Private custom data."),
        "parity-mismatch": _config(
            parity_mismatch_graph,
            "Final text differs from what streamed.",
            output_to_message=lambda state: AIMessage(content="a different final text"),
        ),
        "unstreamed": _config(
            unstreamed_graph,
            "No streamed text.",
            output_to_message=lambda state: AIMessage(content=state["answer"]),
        ),
        "broken": _config(
            lambda: failing_graph(RuntimeError(SECRET), partial=False), "Raises before answering."
        ),
        "broken-midway": _config(
            lambda: failing_graph(RuntimeError(SECRET), partial=True),
            "Raises after a partial answer.",
        ),
        "context-overflow": _config(
            lambda: failing_graph(ContextOverflowError(SECRET), partial=False),
            "A model call exceeds its context window.",
        ),
        "slow": _config(slow_graph, "Silent, then answers.", client_settings=SlowSettings),
        "interrupts": _config(scripted_graph, "Declares interrupts.", INTERRUPTS),
        "bad-citation": _config(bad_citation_graph, "Invalid span."),
        "truncated-call": _config(truncated_call_graph, "Cut-off call."),
        "notes": _config(notes_graph, "Uses the Store."),
        "slow-background": _config(
            slow_graph,
            "Silent, then answers; background.",
            BACKGROUND,
            client_settings=SlowSettings,
        ),
        # Streams for ~3 s, and (an interrupt run) checkpoints in PostgreSQL as it ends.
        "slow-stream-interrupts": _config(
            lambda: scripted_graph(delay=0.4), "Streams slowly; checkpointed.", INTERRUPTS
        ),
        "slow-stream-background": _config(
            lambda: scripted_graph(delay=0.25), "Streams slowly; background.", BACKGROUND
        ),
        "slow-stream": _config(lambda: scripted_graph(delay=0.3), "Streams slowly."),
        "counted-after-resume": _config(
            slow_after_resume_graph,
            "Works for a while after the answer; background too.",
            INTERRUPTS | BACKGROUND,
            client_settings=SlowInterruptSettings,
        ),
        "broken-background": _config(
            lambda: failing_graph(RuntimeError(SECRET), partial=True),
            "Fails after a partial answer; background.",
            BACKGROUND,
        ),
        # A CancelledError nobody requested, as from awaiting a task cancelled elsewhere.
        "self-cancelling-background": _config(
            lambda: failing_graph(asyncio.CancelledError(), partial=True),
            "Raises CancelledError itself; background.",
            BACKGROUND,
        ),
        "parallel-interrupts": _config(
            parallel_interrupts_graph, "Two parallel interrupts.", INTERRUPTS
        ),
        "double-interrupt": _config(
            double_interrupt_graph, "Two interrupts in one node.", INTERRUPTS
        ),
        "slow-after-resume": _config(
            slow_after_resume_graph,
            "Works for a while after the answer.",
            INTERRUPTS,
            client_settings=SlowInterruptSettings,
        ),
        "slow-before-interrupt": _config(
            slow_before_interrupt_graph,
            "Works for a while, then asks; background.",
            INTERRUPTS | BACKGROUND,
            client_settings=SlowInterruptSettings,
        ),
        "tool-runner": _config(server_tool_graph, "Runs selected server tools.", **TOOL_RUNNER),
        "tool-repeats-ids": _config(
            lambda: server_tool_graph(repeat_ids=True), "Repeats call ids.", **TOOL_RUNNER
        ),
        "tool-without-result": _config(
            lambda: server_tool_graph(run_tools=False), "Never runs tools.", **TOOL_RUNNER
        ),
        "subgraph": _config(subgraph_graph, "Works in a subgraph."),
        "traced-tools": _config(traced_tools_graph, "Two traced tool calls in parallel."),
        "traced-tools-held": _config(
            lambda: traced_tools_graph(hold=60), "Two traced tool calls, then a long wait."
        ),
        "subgraph-review-loop": _config(
            subgraph_review_loop_graph,
            "A subgraph that asks again from a new node invocation.",
            INTERRUPTS,
        ),
        "needs-tenant": _config(
            scripted_graph,
            "Its context factory needs metadata.tenant.",
            context_factory=_tenant_context,
        ),
        "needs-tenant-background": _config(
            scripted_graph,
            "Its context factory needs metadata.tenant; background.",
            BACKGROUND,
            context_factory=_tenant_context,
        ),
    }
    for name, config in tests.items():
        registry.register(name, config)
    return registry
