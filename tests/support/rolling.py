"""Rolling restarts behind a load balancer, and a client that keeps calling through them.

``Rotation`` plays the load balancer: it sends each call to one of the instances in service and
restarts one instance at a time (out of service, drained, stopped, started with new settings,
back in service), so every call meets a running instance. ``keep_calling`` counts what the
clients saw while that happens.
"""

from __future__ import annotations

import asyncio
import itertools
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import AbstractContextManager, ExitStack, contextmanager
from dataclasses import dataclass, field

from openai import AsyncOpenAI

from tests.support.clients import sdk_client
from tests.support.servers import Server

Start = Callable[[str], AbstractContextManager[Server]]
"""Starts one instance accepting the given keys setting (healthy when entered)."""


class Rotation:
    """Instances of one service, each started by ``start(keys)``, one call at a time per pick."""

    def __init__(self, start: Start, keys: str, size: int = 2) -> None:
        self._start = start
        self._lock = threading.Lock()
        self._stacks: list[ExitStack] = []
        self.servers: list[Server] = []
        self._busy: dict[str, int] = {}
        self._out: set[str] = set()
        self._turn = itertools.count()
        for _ in range(size):
            self._stacks.append(ExitStack())
            self.servers.append(self._stacks[-1].enter_context(start(keys)))

    @contextmanager
    def pick(self) -> Iterator[Server]:
        """An instance in service, round robin, held busy while the caller uses it."""
        with self._lock:
            ready = [s for s in self.servers if s.url not in self._out]
            server = ready[next(self._turn) % len(ready)]
            self._busy[server.url] = self._busy.get(server.url, 0) + 1
        try:
            yield server
        finally:
            with self._lock:
                self._busy[server.url] -= 1

    def restart_each(self, keys: str) -> None:
        """The rolling restart (blocking: run it in a thread while clients call)."""
        for index, old in enumerate(list(self.servers)):
            with self._lock:
                self._out.add(old.url)
            deadline = time.monotonic() + 30
            while self._busy.get(old.url, 0):  # drained: no call still on it
                assert time.monotonic() < deadline, f"{old.url} never drained"
                time.sleep(0.01)
            self._stacks[index].close()
            stack = ExitStack()
            new = stack.enter_context(self._start(keys))
            with self._lock:
                self._stacks[index], self.servers[index] = stack, new

    def close(self) -> None:
        for stack in self._stacks:
            stack.close()


@dataclass
class Tally:
    """What the calling clients saw: successes by key, and every failure."""

    ok: dict[str, int] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)


@dataclass
class Client:
    """The key every calling client uses now; ``key = ...`` moves them all at once."""

    key: str


async def keep_calling(
    rotation: Rotation,
    client: Client,
    call: Callable[[AsyncOpenAI], Awaitable[object]],
    stop: asyncio.Event,
    *,
    concurrency: int = 3,
    pause: float = 0.02,
    tally: Tally | None = None,
) -> Tally:
    """``concurrency`` clients calling ``call`` through ``rotation``, ``pause`` seconds apart,
    until ``stop`` (the pause leaves the restarting instances the CPU they start with); counted
    into ``tally`` when given, so the caller can watch it while they call."""
    tally = Tally() if tally is None else tally

    async def one_client(sdk: AsyncOpenAI) -> None:
        while not stop.is_set():
            key = client.key
            with rotation.pick() as server:
                try:
                    await call(sdk.with_options(base_url=f"{server.url}/v1", api_key=key))
                except Exception as error:  # every kind of failure counts
                    tally.failures.append(f"{server.url} {key[-6:]}: {error!r}")
                else:
                    tally.ok[key] = tally.ok.get(key, 0) + 1
            await asyncio.sleep(pause)

    async with sdk_client("http://127.0.0.1:9/v1") as sdk:
        await asyncio.gather(*(one_client(sdk) for _ in range(concurrency)))
    return tally


async def answered(tally: Tally, key: str, more_than: int, timeout: float = 60.0) -> None:
    """Wait until more than ``more_than`` calls with ``key`` succeeded: a loaded machine answers
    fewer calls per second, so a test waits for answers rather than for a fixed time."""
    deadline = time.monotonic() + timeout
    while tally.ok.get(key, 0) <= more_than:
        assert not tally.failures, tally.failures
        assert time.monotonic() < deadline, f"{key[-6:]}: only {tally.ok} within {timeout}s"
        await asyncio.sleep(0.05)
