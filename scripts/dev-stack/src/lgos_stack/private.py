"""A private stack's environment: free ports for every component, its own state and PostgreSQL
data folders, and the stack's local default keys (never a developer's), so a benchmark or a test
can run a whole stack beside one a developer has running on the fixed ports."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from lgos_stack.ports import PORT_VARIABLES, free_port

LOCAL_DEFAULT_KEYS = ("DEMO_API_OPENAI_API_KEY", "OPENAI_GATEWAY_API_KEY", "LGOS_API_KEY")
"""Unset in a private stack: the model key (offline-model answers), and the gateway's and
LGOS's keys (the stack's local defaults are used)."""


def free_ports() -> dict[str, str]:
    """A free port for every component's port variable: never the fixed 3000-3015."""
    return {variable: str(free_port()) for variable, _ in PORT_VARIABLES.values()}


def private_env(
    state_dir: Path, pg_data: str | Path, extra: Mapping[str, str] | None = None
) -> dict[str, str]:
    """This process's environment for a private ``devstack``: ``extra`` (DEVSTACK_SKIP and the
    like) on top of it, then free ports and the given folders."""
    env = {
        **os.environ,
        **(extra or {}),
        **free_ports(),
        "DEVSTACK_PGDATA": str(pg_data),
        "DEVSTACK_STATE_DIR": str(state_dir),
    }
    for name in LOCAL_DEFAULT_KEYS:
        env.pop(name, None)
    return env
