"""Driving background Responses: the slow graph's settings, polling, the graphs' markers."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

from openai import AsyncOpenAI

from tests.support.metadata import lgos_settings

TERMINAL = {"completed", "incomplete", "failed", "cancelled"}


def slow(seconds: float) -> dict[str, str]:
    """Metadata that makes the test registry's slow graphs work ``seconds`` before answering."""
    return lgos_settings(seconds=seconds)


def slow_background(input: str, seconds: float) -> dict[str, Any]:
    """A background request to the test registry's ``slow-background`` graph."""
    return {
        "model": "slow-background",
        "input": input,
        "background": True,
        "metadata": slow(seconds),
    }


async def poll(client: AsyncOpenAI, response_id: str, timeout: float = 20.0) -> Any:
    """Retrieve the Response until it reaches a terminal status; fail after ``timeout``."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        response = await client.responses.retrieve(response_id)
        if response.status in TERMINAL:
            return response
        assert asyncio.get_running_loop().time() < deadline, response.status
        await asyncio.sleep(0.1)


async def wait_for(path: Path, timeout: float = 15.0) -> None:
    """Until a graph writes the marker file ``path`` (see tests/support/graphs.py)."""
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert time.monotonic() < deadline, f"{path.name} never appeared"
        await asyncio.sleep(0.05)
