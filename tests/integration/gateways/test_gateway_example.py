"""scripts/examples/gateway_catalog.py against the real LiteLLM gateway and LGOS behind it."""

from __future__ import annotations

import os
import subprocess
import sys

import httpx

from tests.support.gateways import GATEWAY_KEY
from tests.support.metadata import lgos_settings
from tests.support.servers import ROOT, Server

PROMPT = "What does a gateway add in front of a model server?"


def test_example_lists_graphs_and_streams_an_answer(
    litellm_gateway: Server, lgos_server: Server
) -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "examples" / "gateway_catalog.py")],
        env={
            **os.environ,
            "OPENAI_BASE_URL": f"{litellm_gateway.url}/v1",
            "OPENAI_GATEWAY_API_KEY": GATEWAY_KEY,
        },
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    out = result.stdout
    for model in httpx.get(f"{lgos_server.url}/v1/models").json()["data"]:
        line = next(ln for ln in out.splitlines() if ln.strip().startswith(f"lgos/{model['id']} "))
        assert model["lgos"]["description"] in line
    assert "audience in ['general', 'beginner', 'expert']" in out
    # The streamed answer is the one LGOS gives directly for the same request.
    direct = httpx.post(
        f"{lgos_server.url}/v1/responses",
        json={
            "model": "simple-graph",
            "input": PROMPT,
            "metadata": lgos_settings(audience="beginner"),
        },
        timeout=60,
    ).json()
    answer = direct["output"][0]["content"][0]["text"]
    assert answer in out
    assert out.rstrip().endswith("[completed]")
