"""A user's own ``my_graphs.py``, as an author writes it, for tests that serve it with the real
``lgos`` console script from the author's folder."""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import openai
from openai import AsyncOpenAI

from tests.support.servers import Server, free_port, serve

LGOS = Path(sys.executable).parent / "lgos"
TARGET = "my_graphs:create_registry"

_GRAPH = """
def build():
    builder = StateGraph(MessagesState)
    builder.add_node("node", node)
    builder.add_edge(START, "node")
    return builder.compile()


def create_registry() -> GraphRegistry:
    config = GraphConfig(graph=build, description={description!r}, features={features})
    return GraphRegistry.of({{{name!r}: config}})
"""


def answering(
    answer: str, *, description: str = "Mine.", name: str = "my-graph", delay: float = 0.0
) -> str:
    """One node that streams ``answer`` from a scripted chat model after ``delay`` seconds."""
    return f"""
import asyncio

from langgraph.graph import START, MessagesState, StateGraph
from lgos import GraphConfig, GraphRegistry
from lgos.testing import ScriptedFakeChatModel

MODEL = ScriptedFakeChatModel.saying({answer!r})


async def node(state: MessagesState) -> dict:
    await asyncio.sleep({delay!r})
    return {{"messages": [await MODEL.ainvoke(state["messages"])]}}
""" + _GRAPH.format(description=description, features="frozenset()", name=name)


def reviewing(version: str, *, name: str = "my-review") -> str:
    """One node that pauses on a review, then answers ``Decision: <answer> (<version>)``; its
    description is ``version`` too."""
    return f"""
from langchain_core.messages import AIMessage
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.types import interrupt
from lgos import GraphConfig, GraphFeature, GraphRegistry


def node(state: MessagesState) -> dict:
    decision = interrupt({{"question": "Ship it?", "choices": ["approve", "reject"]}})
    return {{"messages": [AIMessage(content=f"Decision: {{decision}} ({version})")]}}
""" + _GRAPH.format(description=version, features="frozenset({GraphFeature.INTERRUPTS})", name=name)


@contextmanager
def lgos_from(project: Path, *args: str, log: Path, env: Mapping[str, str]) -> Iterator[Server]:
    """The ``lgos`` console script run with ``args`` (and a free ``--port``) from ``project``."""
    port = free_port()
    command = [str(LGOS), *args, "--port", str(port)]
    with serve(["lgos"], command=command, port=port, env=env, log=log, cwd=project) as server:
        yield server


async def served_description(client: AsyncOpenAI, model: str) -> str | None:
    """``model``'s description in its ``lgos`` extension; None while the server restarts."""
    try:
        found = await client.models.retrieve(model)
    except openai.APIConnectionError:  # refused between the old server and the new one
        return None
    extension = (found.model_extra or {})["lgos"]
    assert isinstance(extension, dict)
    return str(extension["description"])


async def until_described(
    client: AsyncOpenAI, model: str, expected: str, timeout: float = 60.0
) -> None:
    """Poll ``/v1/models/{model}`` until its description is ``expected`` (bounded)."""
    deadline = time.monotonic() + timeout
    seen = None
    while time.monotonic() < deadline:
        seen = await served_description(client, model)
        if seen == expected:
            return
        await asyncio.sleep(0.2)
    raise AssertionError(f"description still {seen!r} after {timeout} s, expected {expected!r}")
