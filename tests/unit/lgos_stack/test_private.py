"""A private stack's environment: its own ports and folders, never a developer's keys."""

from __future__ import annotations

from pathlib import Path

import pytest
from lgos_stack.ports import PORT_VARIABLES
from lgos_stack.private import LOCAL_DEFAULT_KEYS, private_env


def test_a_private_stack_gets_free_ports_its_folders_and_no_developer_key(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    for name in LOCAL_DEFAULT_KEYS:
        monkeypatch.setenv(name, "sk-a-developers-own")
    monkeypatch.setenv("POSTGRES_PORT", "3001")
    env = private_env(tmp_path / "state", tmp_path / "pg", {"DEVSTACK_SKIP": "open-webui"})
    ports = [int(env[variable]) for variable, _ in PORT_VARIABLES.values()]
    assert all(not 3000 <= port <= 3015 for port in ports)
    assert env["DEVSTACK_STATE_DIR"] == str(tmp_path / "state")
    assert env["DEVSTACK_PGDATA"] == str(tmp_path / "pg")
    assert env["DEVSTACK_SKIP"] == "open-webui"
    assert not set(LOCAL_DEFAULT_KEYS) & set(env)
