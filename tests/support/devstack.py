"""A private native stack (``scripts/devstack.py``, the ``lgos_stack`` runner) on free ports, as
the e2e tiers run it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import httpx
from lgos_stack.keys import DEV_GATEWAY_KEY, FILES_DEV_KEY
from lgos_stack.paths import ROOT
from lgos_stack.ports import PORT_VARIABLES as COMPONENT_PORTS
from lgos_stack.private import private_env

DEVSTACK = [sys.executable, str(ROOT / "scripts" / "devstack.py")]
PORT_VARIABLES = tuple(variable for variable, _ in COMPONENT_PORTS.values())
"""Every port variable the stack runner reads: a private stack overrides them all."""
GATEWAY_KEY = DEV_GATEWAY_KEY
"""The stack's local default gateway key (tests unset OPENAI_GATEWAY_API_KEY)."""


@contextmanager
def pg_data_dir() -> Iterator[str]:
    """PostgreSQL data outside pytest's private tmp, reachable by the server's own user."""
    parent = tempfile.mkdtemp(prefix="lgos-pg-")
    os.chmod(parent, 0o755)
    try:
        yield os.path.join(parent, "data")
    finally:
        shutil.rmtree(parent, ignore_errors=True)


def stack_env(
    state_dir: Path, pg_data: str, extra: Mapping[str, str] | None = None
) -> dict[str, str]:
    # Open WebUI costs ≈ 40 s and ≈ 0.8 GB per start: only the modules that drive it ask.
    return private_env(state_dir, pg_data, {"DEVSTACK_SKIP": "open-webui", **(extra or {})})


@contextmanager
def detached_stack(
    state_dir: Path, pg_data: str, extra: Mapping[str, str] | None = None
) -> Iterator[tuple[dict[str, str], str]]:
    """``devstack up --detach`` → (env, stdout of up); ``down`` afterwards, checked."""
    env = stack_env(state_dir, pg_data, extra)
    up = subprocess.run(
        [*DEVSTACK, "up", "--detach"], env=env, capture_output=True, text=True, timeout=600
    )
    assert up.returncode == 0, up.stdout + up.stderr
    try:
        yield env, up.stdout
    finally:
        down = subprocess.run(
            [*DEVSTACK, "down"], env=env, capture_output=True, text=True, timeout=90
        )
        assert down.returncode == 0, down.stderr


def files_service(stack: Mapping[str, str]) -> httpx.Client:
    """The stack's Files service, asked directly (not through the gateway) with its local key."""
    return httpx.Client(
        base_url=f"http://127.0.0.1:{stack['FILES_PORT']}/v1",
        headers={"Authorization": f"Bearer {FILES_DEV_KEY}"},
        timeout=10.0,
    )


@contextmanager
def both_uis_stack(folder: Path, extra: Mapping[str, str]) -> Iterator[dict[str, str]]:
    """A private stack with Chainlit and Open WebUI (plus ``extra``), its start-up time said."""
    started = time.monotonic()
    with (
        pg_data_dir() as pg_data,
        detached_stack(folder, pg_data, {"DEVSTACK_SKIP": "", **extra}) as (env, _),
    ):
        print(f"private stack with both UIs up in {time.monotonic() - started:.0f}s")
        yield env
