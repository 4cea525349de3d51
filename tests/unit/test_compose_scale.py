"""`docker compose up --scale lgos=N`, checked statically (no Docker engine here): nothing in the
compose file ties LGOS to one container, and everything reaches it by the service name."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]


def compose() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((ROOT / "compose.yaml").read_text())
    return data


def test_lgos_can_run_as_several_replicas() -> None:
    lgos = compose()["services"]["lgos"]
    assert "container_name" not in lgos  # a fixed name allows one container
    (port,) = lgos["ports"]
    # One host port by default (3004); a range of them for N replicas.
    assert port == "127.0.0.1:${LGOS_HOST_PORTS:-3004}:3004"
    for value in ("3004", "3016-3019"):
        host = port.replace("${LGOS_HOST_PORTS:-3004}", value)
        assert re.fullmatch(r"127\.0\.0\.1:\d+(-\d+)?:3004", host)
    assert "replicas" not in lgos.get("deploy", {})  # --scale decides


def lgos_references(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [ref for item in value.values() for ref in lgos_references(item)]
    if isinstance(value, list):
        return [ref for item in value for ref in lgos_references(item)]
    if isinstance(value, str):
        return re.findall(r"https?://[\w.-]*lgos[\w.-]*:\d+", value)
    return []


def test_the_gateways_reach_every_replica_by_the_service_name() -> None:
    services = compose()["services"]
    references = {
        name: lgos_references({k: v for k, v in service.items() if k != "healthcheck"})
        for name, service in services.items()
    }
    used = {ref for refs in references.values() for ref in refs}
    assert used == {"http://lgos:3004"}, references
    for job in ("litellm-sync",):
        assert "http://lgos:3004" in references[job]
    bifrost = json.loads((ROOT / "gateways" / "bifrost" / "config.json").read_text())
    assert bifrost["providers"]["lgos"]["network_config"]["base_url"] == "http://lgos:3004"
