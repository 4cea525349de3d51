"""The LiteLLM config a catalog sync writes: whole or not at all, readable by the proxy."""

from __future__ import annotations

import stat
from pathlib import Path

import yaml
from lgos_gateways.litellm_sync import write_atomically


def test_the_config_is_readable_by_a_proxy_running_as_another_user(tmp_path: Path) -> None:
    # Under compose the sync job (uid 10001) writes it and the proxy (root, every capability
    # dropped, so no reading past file modes) reads it.
    target = tmp_path / "config" / "litellm.yaml"
    write_atomically(target, {"model_list": [], "general_settings": {"master_key": "os.environ/K"}})
    assert stat.S_IMODE(target.stat().st_mode) & 0o044 == 0o044
    assert yaml.safe_load(target.read_text())["general_settings"]["master_key"] == "os.environ/K"
    assert [p.name for p in target.parent.iterdir()] == ["litellm.yaml"]  # no temporary left
