"""Two LGOS instances behind the real LiteLLM gateway: one dies in the middle of a conversation.

Each graph is two deployments under its one model name (the catalog sync given both upstream
URLs). The graphs of ``tests.support.process_graphs`` name the process that ran them, so the
test kills exactly the instance a review paused on. It runs with the shipped router settings and
again with no retries, where only the weighted failover can keep a call off the dead instance:
without it, each call after the kill would fail one time in two.
"""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest
import yaml
from openai import AsyncOpenAI

from tests.support.clients import sdk_client
from tests.support.gateways import GATEWAY_KEY, run_litellm_sync, serve_litellm
from tests.support.interrupts import answer
from tests.support.process_graphs import TARGET, pids
from tests.support.servers import Server, free_port, serve
from tests.support.shared_state import REDIS_URL

UNUSED = "http://127.0.0.1:9"


@pytest.fixture
def instances(postgres_uri: str, tmp_path: Path) -> Iterator[dict[int, Server]]:
    """Two `lgos serve` processes sharing PostgreSQL and Redis, by pid."""
    env = {
        "LGOS_POSTGRES_URI": postgres_uri,
        "LGOS_REDIS_URL": REDIS_URL,
        "LGOS_LEASE_TTL": "2",
        "LGOS_STATE_DIR": str(tmp_path / "state"),
    }
    with ExitStack() as stack:
        found = {}
        for name in ("a", "b"):
            port = free_port()
            args = ["lgos", "serve", TARGET, "--port", str(port)]
            server = stack.enter_context(serve(args, port=port, env=env, log=tmp_path / name))
            found[server.process.pid] = server
        yield found


@pytest.fixture(params=["shipped", "no-retries"])
def gateway(
    instances: dict[int, Server], tmp_path: Path, request: pytest.FixtureRequest
) -> Iterator[Server]:
    config = tmp_path / "litellm.yaml"
    upstreams = ",".join(f"{server.url}/v1" for server in instances.values())
    first = next(iter(instances.values()))
    synced = run_litellm_sync(
        *("--lgos-url", first.url, "--upstream-url", upstreams, "--config", str(config))
    )
    assert synced.returncode == 0, synced.stderr
    if request.param == "no-retries":
        served = yaml.safe_load(config.read_text())
        served["router_settings"]["num_retries"] = 0
        config.write_text(yaml.safe_dump(served))
    env = {"MCP_DEMO_DB_URL": f"{UNUSED}/mcp", "FILES_API_BASE": UNUSED, "FILES_API_KEY": "x"}
    with serve_litellm(config, tmp_path, env) as server:
        yield server


async def say(
    client: AsyncOpenAI, history: list[dict[str, str]], text: str, *, stream: bool = False
) -> int:
    history.append({"role": "user", "content": text})
    if stream:
        chunks = await client.chat.completions.create(
            model="lgos/serving-process", messages=history, stream=True
        )
        content = "".join([c.choices[0].delta.content or "" async for c in chunks if c.choices])
    else:
        reply = await client.chat.completions.create(model="lgos/serving-process", messages=history)
        content = reply.choices[0].message.content or ""
    history.append({"role": "assistant", "content": content})
    (pid,) = pids(content)
    return pid


async def test_the_conversation_and_the_review_go_on_when_one_instance_dies(
    instances: dict[int, Server], gateway: Server
) -> None:
    async with sdk_client(f"{gateway.url}/v1", api_key=GATEWAY_KEY) as client:
        history: list[dict[str, str]] = []
        assert await say(client, history, "Hello") in instances
        paused = await client.responses.create(model="lgos/process-review", input="Ship it")
        call = paused.output[0]
        assert call.type == "function_call" and call.name == "lgos_interrupt"
        asked_in = json.loads(call.arguments)["asked_in"]
        (survivor,) = set(instances) - {asked_in}
        os.kill(asked_in, signal.SIGKILL)
        instances[asked_in].process.wait()
        for turn in range(6):  # each first pick may land on the dead deployment
            streamed = turn % 2 == 1
            assert await say(client, history, f"And now? {turn}", stream=streamed) == survivor
        done = await client.responses.create(
            model="lgos/process-review",
            previous_response_id=paused.id,
            input=[answer(call, "approved")],
        )
        assert done.output_text == (
            f"Asked in process {asked_in}, answered in process {survivor}: approved"
        )
