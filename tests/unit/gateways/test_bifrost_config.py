"""gateways/bifrost/config.json holds what the Bifrost sync and the demo rely on."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

import pytest
from lgos_gateways.bifrost_catalog import check_config, lgos_attribute, pricing_path, pricing_rows
from lgos_gateways.catalog import Graph

from tests.support.servers import ROOT

CONFIG: dict[str, Any] = json.loads((ROOT / "gateways" / "bifrost" / "config.json").read_text())


def test_shipped_config_is_usable() -> None:
    assert check_config(CONFIG) == []
    # Every request type, Responses retrieve/cancel included, stays allowed for LGOS.
    assert "allowed_requests" not in CONFIG["providers"]["lgos"]["custom_provider_config"]
    assert pricing_path(CONFIG) == "/app/data/pricing/lgos-pricing.json"


def set_path(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def apply(config: dict[str, Any]) -> None:
        *parents, leaf = path.split(".")
        node = config
        for key in parents:
            node = node.setdefault(key, {})
        if value is None:
            node.pop(leaf, None)
        else:
            node[leaf] = value

    return apply


BROKEN = {
    "auth off": (set_path("client.enforce_auth_on_inference", False), "enforce_auth"),
    "no store": (set_path("config_store.enabled", False), "config_store"),
    "remote pricing": (
        set_path("framework.pricing.pricing_url", "https://getbifrost.ai/datasheet"),
        "pricing_url",
    ),
    "no lgos provider": (set_path("providers.lgos", None), "providers.lgos is missing"),
    "responses blocked": (
        set_path(
            "providers.lgos.custom_provider_config.allowed_requests",
            {"chat_completion": True, "responses": True},
        ),
        "does not allow responses_stream",
    ),
    "files content blocked": (
        set_path(
            "providers.lgos-files.custom_provider_config.allowed_requests.file_content", False
        ),
        "lgos-files does not allow file_content",
    ),
    "not openai": (
        set_path("providers.lgos.custom_provider_config.base_provider_type", "anthropic"),
        "OpenAI-compatible",
    ),
    "no base url": (set_path("providers.lgos.network_config.base_url", ""), "base_url"),
    "no virtual key": (set_path("governance.virtual_keys", []), "virtual_keys"),
}


def strip_key_ids(config: dict[str, Any]) -> None:
    for provider in config["governance"]["virtual_keys"][0]["provider_configs"]:
        provider.pop("key_ids")


def drop_lgos_grant(config: dict[str, Any]) -> None:
    key = config["governance"]["virtual_keys"][0]
    key["provider_configs"] = [c for c in key["provider_configs"] if c["provider"] != "lgos"]


BROKEN["vk denies provider keys"] = (strip_key_ids, "key_ids")
BROKEN["vk without lgos"] = (drop_lgos_grant, "does not grant provider lgos")


@pytest.mark.parametrize("case", BROKEN, ids=list(BROKEN))
def test_each_relied_on_field_is_checked(case: str) -> None:
    mutate, message = BROKEN[case]
    config = copy.deepcopy(CONFIG)
    mutate(config)
    problems = check_config(config)
    assert any(message in p for p in problems), problems


def test_attribute_is_a_json_string_of_the_complete_extension() -> None:
    lgos = {"description": "d", "features": ["interrupts"], "client_settings": {"defaults": {}}}
    value = lgos_attribute(Graph(id="g", lgos=lgos))
    assert isinstance(value, str) and json.loads(value) == lgos
    assert pricing_rows([Graph(id="g", lgos=lgos)]) == {
        "lgos/g": {
            "provider": "lgos",
            "mode": "responses",
            "input_cost_per_token": 0.0,
            "output_cost_per_token": 0.0,
        }
    }
