"""Catalog reading: LiteLLM's /model/info and Bifrost's native /v1/models (against the project's
FAKE of Bifrost's documented API, since no Bifrost runs here)."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from lgos_ui.catalog import (
    DEFAULT_GRAPH,
    CatalogCache,
    CatalogError,
    Example,
    default_entry,
    entry_from_extension,
    fetch_catalog,
    gateway_root,
    parse_bifrost_models,
    parse_litellm_model_info,
)

from tests.support import bifrost_contract

SIMPLE_LGOS: dict[str, Any] = {
    "description": "Streams responses.",
    "features": ["background", "some-future-feature"],
    "server_tools": [],
    "client_tools": ["display_file"],
    "client_settings": {
        "json_schema": {"type": "object", "properties": {"audience": {"type": "string"}}},
        "defaults": {"audience": "general"},
    },
}


def litellm_payload() -> dict[str, Any]:
    return {
        "data": [
            {"model_name": "lgos-files-service", "model_info": {"id": "x"}},
            {"model_name": "lgos/simple-graph", "model_info": {"lgos": SIMPLE_LGOS}},
            {"model_name": "lgos/simple-graph", "model_info": {"lgos": SIMPLE_LGOS}},
            {"model_name": "lgos/stripped", "model_info": {"managed_by": "someone"}},
            {"model_name": "gpt-real", "model_info": None},
            "not an object",
        ]
    }


def test_litellm_graphs_keep_order_skip_non_graphs_and_mark_stripped_ones() -> None:
    entries = parse_litellm_model_info(litellm_payload())
    assert [e.model for e in entries] == ["lgos/simple-graph", "lgos/stripped"]
    simple, stripped = entries
    assert simple.graph == "simple-graph" and simple.description == "Streams responses."
    assert simple.has("background") and simple.has("some-future-feature")
    assert simple.client_tools == ("display_file",)
    assert simple.settings_defaults == {"audience": "general"}
    assert not simple.limited
    assert stripped.limited and stripped.graph == "stripped" and not stripped.features


def test_a_malformed_extension_is_a_limited_graph_not_a_crash() -> None:
    payload = {"data": [{"model_name": "lgos/odd", "model_info": {"lgos": ["not", "a", "map"]}}]}
    (entry,) = parse_litellm_model_info(payload)
    assert entry.limited
    with pytest.raises(CatalogError):
        parse_litellm_model_info({"models": []})


def test_bifrost_attributes_are_a_json_string() -> None:
    payload = {
        "data": [
            {"id": "lgos/simple-graph", "additional_attributes": {"lgos": json.dumps(SIMPLE_LGOS)}},
            {"id": "lgos/broken", "additional_attributes": {"lgos": "{not json"}},
            {"id": "lgos/bare"},
            {"id": "openai/gpt-4.1", "additional_attributes": {}},
        ]
    }
    entries = parse_bifrost_models(payload)
    assert [(e.model, e.limited) for e in entries] == [
        ("lgos/simple-graph", False),
        ("lgos/broken", True),
        ("lgos/bare", True),
    ]
    assert entries[0].client_tools == ("display_file",)


def test_gateway_root_strips_the_v1_suffix() -> None:
    assert gateway_root("http://gw:3000/v1/") == "http://gw:3000"
    assert gateway_root("http://gw:3000") == "http://gw:3000"


async def test_fetch_from_the_bifrost_fake(tmp_path: Path) -> None:
    pricing = tmp_path / "pricing.json"
    pricing.write_text(
        json.dumps(
            {
                "lgos/simple-graph": {"provider": "lgos", "model": "simple-graph"},
                "lgos/stripped": {"provider": "lgos", "model": "stripped"},
                "other/model": {"provider": "other", "model": "model"},
            }
        )
    )
    app = bifrost_contract.create_app(pricing, ("admin", "pw"), "sk-bf-test")
    basic = "Basic " + base64.b64encode(b"admin:pw").decode()
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://bifrost") as http:
        (
            await http.post("/api/pricing/force-sync", headers={"Authorization": basic})
        ).raise_for_status()
        upsert = [
            {
                "provider": "lgos",
                "model": "simple-graph",
                "additional_attributes": {"lgos": json.dumps(SIMPLE_LGOS)},
            }
        ]
        put = await http.put("/api/models/catalog", json=upsert, headers={"Authorization": basic})
        assert put.status_code == 204
        entries = await fetch_catalog(http, "http://bifrost/v1", "sk-bf-test", "bifrost")
        assert [(e.model, e.limited) for e in entries] == [
            ("lgos/simple-graph", False),
            ("lgos/stripped", True),
        ]
        assert entries[0].description == "Streams responses."
        with pytest.raises(CatalogError) as refused:
            await fetch_catalog(http, "http://bifrost/v1", "wrong-key", "bifrost")
        assert refused.value.status_code == 401


async def test_fetch_from_litellm_uses_model_info_with_the_key() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json=litellm_payload())

    async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as http:
        entries = await fetch_catalog(http, "http://gw:3000/v1", "sk-key", "litellm")
    assert [e.graph for e in entries] == ["simple-graph", "stripped"]
    assert seen[0].url.path == "/model/info"
    assert seen[0].headers["authorization"] == "Bearer sk-key"


async def test_fetch_failures_are_catalog_errors() -> None:
    def down(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused")

    async with httpx.AsyncClient(transport=httpx.MockTransport(down)) as http:
        with pytest.raises(CatalogError, match="unreachable"):
            await fetch_catalog(http, "http://gw/v1", "k", "litellm")

    def not_json(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, text="<html>")

    async with httpx.AsyncClient(transport=httpx.MockTransport(not_json)) as http:
        with pytest.raises(CatalogError, match="not JSON"):
            await fetch_catalog(http, "http://gw/v1", "k", "litellm")


async def test_the_cache_rereads_when_due_or_for_another_gateway_and_keeps_the_last_list() -> None:
    answers: list[httpx.Response] = [
        httpx.Response(200, json=litellm_payload()),
        httpx.Response(503, text="down"),
        httpx.Response(200, json={"data": []}),
    ]
    hosts: list[str] = []

    def gateway(request: httpx.Request) -> httpx.Response:
        hosts.append(request.url.host)
        return answers.pop(0)

    cache = CatalogCache(ttl=3600)
    async with httpx.AsyncClient(transport=httpx.MockTransport(gateway)) as http:
        first = await cache.get("http://gw-a/v1", "sk", "litellm", http)
        assert [e.graph for e in first] == ["simple-graph", "stripped"]
        assert await cache.get("http://gw-a/v1", "sk", "litellm", http) == first  # fresh
        assert hosts == ["gw-a"]
        # Another gateway is read at once; its failure keeps the last good list and says why.
        assert await cache.get("http://gw-b/v1", "sk", "litellm", http) == first
        assert cache.error == "the gateway's catalog answered 503"
        cache.ttl = 0
        assert await cache.get("http://gw-b/v1", "sk", "litellm", http) == []
        assert cache.error is None and hosts == ["gw-a", "gw-b", "gw-b"]


def test_examples_are_read_in_order_and_unreadable_ones_ignored() -> None:
    lgos = {
        **SIMPLE_LGOS,
        "examples": [
            {"label": "Chat", "prompt": "Say hello."},
            {"label": "", "prompt": "no label"},
            {"label": "No prompt"},
            {"label": 3, "prompt": "not text"},
            "not an object",
            {"label": "  Save  ", "prompt": " Remember: x. ", "future": True},
        ],
    }
    entry = entry_from_extension("lgos/simple-graph", lgos)
    assert entry.examples == (Example("Chat", "Say hello."), Example("Save", "Remember: x."))
    assert entry_from_extension("lgos/simple-graph", SIMPLE_LGOS).examples == ()
    assert entry_from_extension("lgos/x", {**SIMPLE_LGOS, "examples": "text"}).examples == ()
    many = {**SIMPLE_LGOS, "examples": [{"label": f"e{i}", "prompt": "p"} for i in range(20)]}
    assert len(entry_from_extension("lgos/x", many).examples) == 8


def test_new_chats_open_on_the_showcase_when_it_is_served() -> None:
    simple = entry_from_extension("lgos/simple-graph", SIMPLE_LGOS)
    advanced = entry_from_extension("lgos/advanced-graph", SIMPLE_LGOS)
    assert DEFAULT_GRAPH == "advanced-graph"
    assert default_entry([simple, advanced]) is advanced
    assert default_entry([simple]) is simple  # not served: the catalog's first
    assert default_entry([simple, advanced], "simple-graph") is simple
    assert default_entry([]) is None
