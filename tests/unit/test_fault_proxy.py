"""The test fault injector itself: it forwards, cuts, refuses, blackholes and delays for real."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator

import pytest

from tests.support.fault_proxy import FaultProxy


async def _echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    while data := await reader.read(1024):
        writer.write(data)
        await writer.drain()
    writer.close()


@pytest.fixture
async def proxy() -> AsyncIterator[FaultProxy]:
    server = await asyncio.start_server(_echo, "127.0.0.1", 0)
    upstream = server.sockets[0].getsockname()[1]
    with FaultProxy(upstream) as proxy:
        yield proxy
    server.close()


async def _roundtrip(proxy: FaultProxy, payload: bytes = b"ping") -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", proxy.port)
    try:
        writer.write(payload)
        await writer.drain()
        return await asyncio.wait_for(reader.readexactly(len(payload)), timeout=2)
    finally:
        writer.close()


async def test_forwards_both_ways(proxy: FaultProxy) -> None:
    assert await _roundtrip(proxy, b"hello") == b"hello"


async def test_cut_resets_open_connections_and_new_ones_work(proxy: FaultProxy) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", proxy.port)
    writer.write(b"a")
    assert await reader.readexactly(1) == b"a"
    assert proxy.cut() == 1
    with pytest.raises((ConnectionError, asyncio.IncompleteReadError)):
        await asyncio.wait_for(reader.readexactly(1), timeout=2)
    writer.close()
    assert await _roundtrip(proxy) == b"ping"


async def test_refuse_resets_new_connections(proxy: FaultProxy) -> None:
    proxy.set_mode("refuse")
    with pytest.raises((ConnectionError, asyncio.IncompleteReadError)):
        await _roundtrip(proxy)
    proxy.set_mode("forward")
    assert await _roundtrip(proxy) == b"ping"


async def test_blackhole_accepts_and_never_answers(proxy: FaultProxy) -> None:
    proxy.set_mode("blackhole")
    reader, writer = await asyncio.open_connection("127.0.0.1", proxy.port)
    writer.write(b"anyone?")
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(reader.read(1), timeout=0.5)
    assert proxy.open_connections == 1
    assert proxy.cut() == 1
    writer.close()
    proxy.set_mode("forward")
    assert await _roundtrip(proxy) == b"ping"


async def test_delay_slows_each_chunk(proxy: FaultProxy) -> None:
    proxy.delay = 0.2
    started = time.monotonic()
    assert await _roundtrip(proxy) == b"ping"
    assert time.monotonic() - started >= 0.4  # one delay each way
