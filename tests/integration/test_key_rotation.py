"""Rotating the LGOS and Files service keys without downtime, as docs/how-to/keys-and-tenants.md
tells it: two instances behind a load balancer, each restarted in turn with the old and the new
key, the clients moved to the new key, each restarted again with the new key alone. Clients call
all the while and no call fails; what the old key owned, the new key (same scope) still owns."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import openai
import pytest
from openai import AsyncOpenAI

from tests.support.clients import sdk_client
from tests.support.files import files_client, scratch_database
from tests.support.interrupts import resume_of
from tests.support.lgos_processes import api_process
from tests.support.rolling import Client, Rotation, Tally, answered, keep_calling
from tests.support.servers import Server, free_port, serve
from tests.support.shared_state import shared_env

OLD, NEW = "sk-lgos-old-key", "sk-lgos-new-key"
FILES_OLD, FILES_NEW = "sk-files-old-key", "sk-files-new-key"
Call = Callable[[AsyncOpenAI], Awaitable[object]]


async def rolling_rotation(
    rotation: Rotation, client: Client, call: Call, both: str, only_new: str, new_key: str
) -> Tally:
    """Add the new key on each instance in turn, move the clients, then drop the old key on
    each instance in turn, while ``call`` keeps going through the instances in service."""
    stop, seen = asyncio.Event(), Tally()
    calling = asyncio.create_task(keep_calling(rotation, client, call, stop, tally=seen))
    await answered(seen, client.key, 10)
    await asyncio.to_thread(rotation.restart_each, both)
    client.key = new_key
    await answered(seen, new_key, 10)
    await asyncio.to_thread(rotation.restart_each, only_new)
    await asyncio.sleep(0.5)
    stop.set()
    return await calling


def assert_no_call_failed(tally: Tally, old: str, new: str) -> None:
    assert tally.failures == []
    # Both keys carried calls, on instances started with old, both and new settings.
    assert tally.ok.get(old, 0) > 10 and tally.ok.get(new, 0) > 10, tally.ok


async def test_lgos_key_rotates_on_two_instances_without_a_failed_call(
    postgres_uri: str, offline_model: Server, tmp_path: Path
) -> None:
    env = shared_env(postgres_uri, offline_model, tmp_path, 5.0)

    @contextmanager
    def lgos(keys: str) -> Iterator[Server]:
        with api_process({**env, "LGOS_API_KEYS": keys}, tmp_path / f"lgos-{time.time()}.log") as s:
            yield s

    async def call(sdk: AsyncOpenAI) -> None:
        answer = await sdk.responses.create(model="scripted", input="still there?")
        assert answer.status == "completed"

    rotation = Rotation(lgos, f"{OLD}=gateway")
    started = time.monotonic()
    try:
        async with sdk_client(f"{rotation.servers[0].url}/v1", api_key=OLD) as before:
            paused = await before.responses.create(model="interruptible-approval", input="Ship it")
        tally = await rolling_rotation(
            rotation, Client(OLD), call, f"{OLD}=gateway,{NEW}=gateway", f"{NEW}=gateway", NEW
        )
        assert_no_call_failed(tally, OLD, NEW)
        for server in rotation.servers:
            async with sdk_client(f"{server.url}/v1", api_key=OLD) as dropped:
                with pytest.raises(openai.AuthenticationError):
                    await dropped.models.list()
        # The review paused under the old key is the new key's: same scope.
        async with sdk_client(f"{rotation.servers[1].url}/v1", api_key=NEW) as after:
            done = await after.responses.create(**resume_of(paused, "approve"))
        assert done.output_text.startswith("Decision: approved.")
    finally:
        rotation.close()
    print(f"LGOS key rotated in {time.monotonic() - started:.1f}s, calls {tally.ok}")


async def test_files_key_rotates_on_two_instances_without_a_failed_call(tmp_path: Path) -> None:
    storage = tmp_path / "storage"
    with scratch_database() as database:

        @contextmanager
        def files(keys: str) -> Iterator[Server]:
            port = free_port()
            env = {
                "FILES_PORT": str(port),
                "FILES_POSTGRES_URI": database,
                "FILES_STORAGE_DIR": str(storage),
                "FILES_API_KEYS": keys,
            }
            log = tmp_path / f"files-{time.time()}.log"
            with serve(["files_service"], port=port, env=env, log=log) as server:
                yield server

        rotation = Rotation(files, FILES_OLD)
        started = time.monotonic()
        try:
            async with files_client(f"{rotation.servers[0].url}/v1", api_key=FILES_OLD) as before:
                kept = await before.files.create(file=("kept.txt", b"kept"), purpose="assistants")

            async def call(sdk: AsyncOpenAI) -> None:
                assert (await sdk.files.retrieve(kept.id)).bytes == 4

            tally = await rolling_rotation(
                rotation, Client(FILES_OLD), call, f"{FILES_OLD},{FILES_NEW}", FILES_NEW, FILES_NEW
            )
            assert_no_call_failed(tally, FILES_OLD, FILES_NEW)
            for server in rotation.servers:
                async with files_client(f"{server.url}/v1", api_key=FILES_OLD) as dropped:
                    with pytest.raises(openai.AuthenticationError):
                        await dropped.files.list()
        finally:
            rotation.close()
    print(f"Files key rotated in {time.monotonic() - started:.1f}s, calls {tally.ok}")
