"""Rotating the gateway key on the real LiteLLM proxy without a restart: the auth hook reads its
keys from OPENAI_GATEWAY_API_KEYS_FILE whenever the file changes. Clients call all the while (old
key, then the new one) and none fails; the proxy process is the same one throughout."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import openai
import pytest
from openai import AsyncOpenAI

from tests.support.clients import sdk_client
from tests.support.gateways import serve_litellm
from tests.support.rolling import Client, Rotation, Tally, answered, keep_calling
from tests.support.servers import Server

OLD, NEW = "sk-gateway-old-key", "sk-gateway-new-key"
CONFIG = """
model_list:
  - model_name: offline
    litellm_params:
      model: openai/offline
      api_base: {offline}/v1
      api_key: not-checked
general_settings:
  master_key: os.environ/OPENAI_GATEWAY_API_KEY
  custom_auth: lgos_key_auth.user_api_key_auth
"""


def replace(path: Path, *keys: str) -> None:
    """Write the keys file as the page says: a new file moved over the old one."""
    new = path.with_suffix(".new")
    new.write_text("# gateway keys\n" + "".join(f"{key}\n" for key in keys))
    os.replace(new, path)


async def test_gateway_key_rotates_without_a_restart_or_a_failed_call(
    offline_model: Server, tmp_path: Path
) -> None:
    keys = tmp_path / "gateway-keys"
    replace(keys, OLD)
    config = tmp_path / "litellm.yaml"
    config.write_text(CONFIG.format(offline=offline_model.url))
    env = {"OPENAI_GATEWAY_API_KEY": OLD, "OPENAI_GATEWAY_API_KEYS_FILE": str(keys)}
    started: list[float] = []

    @contextmanager
    def gateway(_: str) -> Iterator[Server]:
        began = time.monotonic()
        with serve_litellm(config, tmp_path, env) as server:
            started.append(time.monotonic() - began)
            yield server

    async def call(sdk: AsyncOpenAI) -> None:
        answer = await sdk.chat.completions.create(
            model="offline", messages=[{"role": "user", "content": "still there?"}]
        )
        assert answer.choices[0].message.content

    rotation = Rotation(gateway, OLD, size=1)
    proxy = (tmp_path / "litellm.pid.child").read_text()
    try:
        client, stop, seen = Client(OLD), asyncio.Event(), Tally()
        calling = asyncio.create_task(keep_calling(rotation, client, call, stop, tally=seen))
        await answered(seen, OLD, 5)
        replace(keys, OLD, NEW)
        await asyncio.sleep(0.5)
        client.key = NEW
        await answered(seen, NEW, 5)
        replace(keys, NEW)
        await asyncio.sleep(1.0)
        stop.set()
        tally = await calling
        assert tally.failures == []
        assert tally.ok.get(OLD, 0) > 5 and tally.ok.get(NEW, 0) > 5, tally.ok
        url = f"{rotation.servers[0].url}/v1"
        async with sdk_client(url, api_key=OLD) as dropped:
            with pytest.raises(openai.AuthenticationError):
                await dropped.models.list()
        # A file that cannot be read lets no key in.
        keys.unlink()
        async with sdk_client(url, api_key=NEW) as current:
            with pytest.raises(openai.AuthenticationError):
                await current.models.list()
            replace(keys, NEW)
            assert (await current.models.list()).data
        assert (tmp_path / "litellm.pid.child").read_text() == proxy  # never restarted
    finally:
        rotation.close()
    print(f"gateway key rotated, calls {tally.ok}; a gateway start took {started[0]:.1f}s")
