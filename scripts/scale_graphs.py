"""The scale benchmark's graphs: one model call each, on two offline-model processes.

``slow-chat`` calls the slow model (``BENCH_SLOW_MODEL_URL``, a token every 200 ms) that holds the
thousand streams open; ``fast-chat`` calls an unpaced one (``BENCH_FAST_MODEL_URL``), so a new
request's time to first delta is what LGOS adds while it holds them, not the model's pacing.
``slow-fake`` / ``fast-fake`` are the same graph around an in-process FAKE model
(``ScriptedFakeChatModel``, same pacing, no HTTP client): what LGOS and LangGraph cost alone.

    lgos serve scripts.scale_graphs:create_registry
"""

from __future__ import annotations

import os
from typing import Any

from langgraph.pregel import Pregel
from lgos import GraphConfig, GraphRegistry
from lgos.testing import ScriptedFakeChatModel
from lgos_demo_graphs.model import DemoAPISettings, chat_model

from scripts.bench_graphs import build

FAKE_PIECES = [f"token{i} " for i in range(70)]
FAKE_DELAY = 0.2


def chat_graph(url_variable: str) -> Pregel[Any, Any, Any, Any]:
    return build(chat_model(DemoAPISettings(offline_model_url=os.environ[url_variable])))


def fake_graph(delay: float) -> Pregel[Any, Any, Any, Any]:
    return build(ScriptedFakeChatModel(pieces=FAKE_PIECES, delay=delay, yield_between=True))


def create_registry() -> GraphRegistry:
    return GraphRegistry.of(
        {
            "slow-chat": GraphConfig(
                graph=lambda: chat_graph("BENCH_SLOW_MODEL_URL"), description="Paced answer."
            ),
            "fast-chat": GraphConfig(
                graph=lambda: chat_graph("BENCH_FAST_MODEL_URL"), description="Unpaced answer."
            ),
            "slow-fake": GraphConfig(
                graph=lambda: fake_graph(FAKE_DELAY), description="Paced FAKE answer."
            ),
            "fast-fake": GraphConfig(graph=lambda: fake_graph(0.0), description="FAKE answer."),
        }
    )
