"""Graphs that exist only for tests, served beside the demo graphs.

``lgos serve tests.support.graphs:create_registry`` serves the same registry over a socket.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Annotated, Any, TypedDict

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
from pydantic import Field

SCRIPTED_TEXT = "Hello from the scripted model, piece by piece."
PRIVATE_TEXT = "PRIVATE-SELECTION-NOTES"
SECRET = "secret-detail-4711"
ANSWER_USAGE = {"input_tokens": 3, "output_tokens": 5, "total_tokens": 8}
PRIVATE_USAGE = {"input_tokens": 1, "output_tokens": 2, "total_tokens": 3}


def _single_node(fn: Any, context_schema: Any = None) -> Any:
    builder = StateGraph(MessagesState, context_schema=context_schema)
    builder.add_node("node", fn)
    builder.add_edge(START, "node")
    return builder.compile()


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

    builder = StateGraph(MessagesState)
    builder.add_node("select", select)
    builder.add_node("answer", answer)
    builder.add_edge(START, "select")
    builder.add_edge("select", "answer")
    return builder.compile()


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

    builder = StateGraph(AnswerState)
    builder.add_node("node", node)
    builder.add_edge(START, "node")
    return builder.compile()


def failing_graph(exc: BaseException, *, partial: bool) -> Any:
    model = ScriptedFakeChatModel.saying("A partial answer before the failure")

    async def node(state: MessagesState) -> dict[str, Any]:
        if partial:
            await model.ainvoke(state["messages"])
        raise exc

    return _single_node(node)


class SlowSettings(ClientSettings):
    seconds: float = 1.0


def _marker(name: str) -> None:
    """One line per event, so tests can count how often a run started (never twice)."""
    directory = os.environ.get("LGOS_TEST_MARKERS")
    if directory:
        with Path(directory, name).open("a") as out:
            out.write(name + "\n")


def _count(name: str) -> None:
    """One line more per call: a side effect tests can count (a duplicate run shows as two)."""
    directory = os.environ.get("LGOS_TEST_MARKERS")
    if directory:
        with Path(directory, name).open("a") as out:
            out.write("1\n")


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

    builder = StateGraph(MessagesState, context_schema=ToolContext)
    builder.add_node("select", select)
    builder.add_node("answer", answer)
    builder.add_edge(START, "select")
    if run_tools:
        builder.add_node("tools", ToolNode([*tools.values(), internal_lookup]))
        builder.add_edge("select", "tools")
        builder.add_edge("tools", "answer")
    else:
        builder.add_edge("select", "answer")
    return builder.compile()


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

    builder = StateGraph(MessagesState, context_schema=SlowInterruptSettings)
    builder.add_node("ask", ask)
    builder.add_node("work", work)
    builder.add_edge(START, "ask")
    builder.add_edge("ask", "work")
    return builder.compile()


def slow_before_interrupt_graph() -> Any:
    """Works for ``seconds`` (longer than a short lease), then asks once, then answers."""

    async def work(state: MessagesState, runtime: Runtime[SlowInterruptSettings]) -> dict[str, Any]:
        await asyncio.sleep((runtime.context or SlowInterruptSettings()).seconds)
        return {}

    def ask(state: MessagesState) -> dict[str, Any]:
        return {"messages": [AIMessage(content=f"approved: {interrupt({'question': 'go?'})}")]}

    builder = StateGraph(MessagesState, context_schema=SlowInterruptSettings)
    builder.add_node("work", work)
    builder.add_node("ask", ask)
    builder.add_edge(START, "work")
    builder.add_edge("work", "ask")
    return builder.compile()


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

    nested = StateGraph(MessagesState)
    nested.add_node("inner", inner)
    nested.add_edge(START, "inner")
    builder = StateGraph(MessagesState)
    builder.add_node("nested", nested.compile())
    builder.add_edge(START, "nested")
    return builder.compile()


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


def create_registry() -> GraphRegistry:
    registry = demo_registry()
    tests: dict[str, GraphConfig] = {
        "echo-request": GraphConfig(
            graph=echo_graph,
            description="Reports the GraphRequest it received.",
            client_settings=EchoSettings,
            request_to_input=_echo_request,
            client_tools=["display_file"],
            server_tools=["package_version", "web_search"],
        ),
        "scripted": GraphConfig(graph=scripted_graph, description="Scripted fake model."),
        "no-usage": GraphConfig(
            graph=lambda: scripted_graph(with_usage=False), description="Reports no usage."
        ),
        "private-then-answer": GraphConfig(
            graph=private_then_answer_graph, description="A nostream call, then an answer."
        ),
        "custom-data": GraphConfig(graph=custom_data_graph, description="Private custom data."),
        "parity-mismatch": GraphConfig(
            graph=parity_mismatch_graph,
            description="Final text differs from what streamed.",
            output_to_message=lambda state: AIMessage(content="a different final text"),
        ),
        "unstreamed": GraphConfig(
            graph=unstreamed_graph,
            description="No streamed text.",
            output_to_message=lambda state: AIMessage(content=state["answer"]),
        ),
        "broken": GraphConfig(
            graph=lambda: failing_graph(RuntimeError(SECRET), partial=False),
            description="Raises before answering.",
        ),
        "broken-midway": GraphConfig(
            graph=lambda: failing_graph(RuntimeError(SECRET), partial=True),
            description="Raises after a partial answer.",
        ),
        "context-overflow": GraphConfig(
            graph=lambda: failing_graph(ContextOverflowError(SECRET), partial=False),
            description="A model call exceeds its context window.",
        ),
        "slow": GraphConfig(
            graph=slow_graph, description="Silent, then answers.", client_settings=SlowSettings
        ),
        "interrupts": GraphConfig(
            graph=scripted_graph,
            description="Declares interrupts.",
            features=frozenset({GraphFeature.INTERRUPTS}),
        ),
        "bad-citation": GraphConfig(graph=bad_citation_graph, description="Invalid span."),
        "truncated-call": GraphConfig(graph=truncated_call_graph, description="Cut-off call."),
        "notes": GraphConfig(graph=notes_graph, description="Uses the Store."),
        "slow-background": GraphConfig(
            graph=slow_graph,
            description="Silent, then answers; background.",
            client_settings=SlowSettings,
            features=frozenset({GraphFeature.BACKGROUND}),
        ),
        "slow-stream-interrupts": GraphConfig(
            # Streams for ~3 s, and (an interrupt run) checkpoints in PostgreSQL as it ends.
            graph=lambda: scripted_graph(delay=0.4),
            description="Streams slowly; checkpointed.",
            features=frozenset({GraphFeature.INTERRUPTS}),
        ),
        "slow-stream-background": GraphConfig(
            graph=lambda: scripted_graph(delay=0.25),
            description="Streams slowly; background.",
            features=frozenset({GraphFeature.BACKGROUND}),
        ),
        "slow-stream": GraphConfig(
            graph=lambda: scripted_graph(delay=0.3), description="Streams slowly."
        ),
        "counted-after-resume": GraphConfig(
            graph=slow_after_resume_graph,
            description="Works for a while after the answer; background too.",
            features=frozenset({GraphFeature.INTERRUPTS, GraphFeature.BACKGROUND}),
            client_settings=SlowInterruptSettings,
        ),
        "broken-background": GraphConfig(
            graph=lambda: failing_graph(RuntimeError(SECRET), partial=True),
            description="Fails after a partial answer; background.",
            features=frozenset({GraphFeature.BACKGROUND}),
        ),
        "self-cancelling-background": GraphConfig(
            # A CancelledError nobody requested, as from awaiting a task cancelled elsewhere.
            graph=lambda: failing_graph(asyncio.CancelledError(), partial=True),
            description="Raises CancelledError itself; background.",
            features=frozenset({GraphFeature.BACKGROUND}),
        ),
        "parallel-interrupts": GraphConfig(
            graph=parallel_interrupts_graph,
            description="Two parallel interrupts.",
            features=frozenset({GraphFeature.INTERRUPTS}),
        ),
        "double-interrupt": GraphConfig(
            graph=double_interrupt_graph,
            description="Two interrupts in one node.",
            features=frozenset({GraphFeature.INTERRUPTS}),
        ),
        "slow-after-resume": GraphConfig(
            graph=slow_after_resume_graph,
            description="Works for a while after the answer.",
            features=frozenset({GraphFeature.INTERRUPTS}),
            client_settings=SlowInterruptSettings,
        ),
        "slow-before-interrupt": GraphConfig(
            graph=slow_before_interrupt_graph,
            description="Works for a while, then asks; background.",
            features=frozenset({GraphFeature.INTERRUPTS, GraphFeature.BACKGROUND}),
            client_settings=SlowInterruptSettings,
        ),
        "tool-runner": GraphConfig(
            graph=server_tool_graph,
            description="Runs selected server tools.",
            server_tools=["package_version", "web_search"],
            context_factory=_tool_context,
        ),
        "tool-repeats-ids": GraphConfig(
            graph=lambda: server_tool_graph(repeat_ids=True),
            description="Repeats call ids.",
            server_tools=["package_version", "web_search"],
            context_factory=_tool_context,
        ),
        "tool-without-result": GraphConfig(
            graph=lambda: server_tool_graph(run_tools=False),
            description="Never runs tools.",
            server_tools=["package_version", "web_search"],
            context_factory=_tool_context,
        ),
        "subgraph": GraphConfig(graph=subgraph_graph, description="Works in a subgraph."),
        "subgraph-review-loop": GraphConfig(
            graph=subgraph_review_loop_graph,
            description="A subgraph that asks again from a new node invocation.",
            features=frozenset({GraphFeature.INTERRUPTS}),
        ),
        "needs-tenant": GraphConfig(
            graph=scripted_graph,
            description="Its context factory needs metadata.tenant.",
            context_factory=_tenant_context,
        ),
        "needs-tenant-background": GraphConfig(
            graph=scripted_graph,
            description="Its context factory needs metadata.tenant; background.",
            context_factory=_tenant_context,
            features=frozenset({GraphFeature.BACKGROUND}),
        ),
    }
    for name, config in tests.items():
        registry.register(name, config)
    return registry
