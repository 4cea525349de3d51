"""The LiteLLM catalog merge: managed entries follow LGOS, operator entries never move."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from lgos_gateways.catalog import CatalogError, Graph
from lgos_gateways.litellm_catalog import MANAGED_BY, Upstream, deployment, merge_catalog

UPSTREAM = Upstream(api_base="http://lgos:3004/v1", api_key="k")
OPERATOR = {
    "model_name": "gpt-small",
    "litellm_params": {"model": "openai/gpt-4.1-mini", "api_key": "os.environ/OPENAI_API_KEY"},
}


def graph(graph_id: str, description: str = "d") -> Graph:
    lgos = {
        "description": description,
        "features": [],
        "server_tools": [],
        "client_tools": [],
        "client_settings": {"json_schema": {"type": "object"}, "defaults": {}},
    }
    return Graph(id=graph_id, lgos=lgos)


def config(*entries: dict[str, Any]) -> dict[str, Any]:
    return {"general_settings": {"master_key": "os.environ/K"}, "model_list": list(entries)}


def test_first_sync_adds_every_graph_after_operator_entries() -> None:
    merged, report = merge_catalog(config(OPERATOR), [graph("a"), graph("b")], UPSTREAM)
    names = [m["model_name"] for m in merged["model_list"]]
    assert names == ["gpt-small", "lgos/a", "lgos/b"]
    assert merged["model_list"][0] == OPERATOR
    assert report.added == ["lgos/a", "lgos/b"] and report.changed
    assert merged["general_settings"] == {"master_key": "os.environ/K"}


def test_deployment_routes_natively_and_carries_the_extension() -> None:
    entry = deployment(graph("simple-graph", "Streams."), UPSTREAM)
    assert entry["litellm_params"] == {
        "model": "openai/simple-graph",
        "api_base": "http://lgos:3004/v1",
        "api_key": "k",
    }
    info = entry["model_info"]
    assert info["managed_by"] == MANAGED_BY
    assert info["supports_native_streaming"] is True
    assert "mode" not in info  # keeps Chat Completions real
    assert info["lgos"]["description"] == "Streams."


def test_resync_updates_changed_removes_vanished_and_reports_unchanged() -> None:
    first, _ = merge_catalog(config(OPERATOR), [graph("a"), graph("b"), graph("c")], UPSTREAM)
    operator_before = copy.deepcopy(first["model_list"][0])
    second, report = merge_catalog(first, [graph("a"), graph("c", "new text")], UPSTREAM)
    assert [m["model_name"] for m in second["model_list"]] == ["gpt-small", "lgos/a", "lgos/c"]
    assert report.removed == ["lgos/b"]
    assert report.updated == ["lgos/c"]
    assert report.unchanged == ["lgos/a"]
    assert second["model_list"][0] == operator_before


def test_nothing_changes_when_the_catalog_is_the_same() -> None:
    first, _ = merge_catalog(config(), [graph("a")], UPSTREAM)
    _, report = merge_catalog(first, [graph("a")], UPSTREAM)
    assert not report.changed


def test_an_operator_entry_with_a_graph_name_is_refused() -> None:
    clash = {**OPERATOR, "model_name": "lgos/a"}
    with pytest.raises(CatalogError, match="lgos/a"):
        merge_catalog(config(clash), [graph("a")], UPSTREAM)


def test_duplicate_graphs_are_refused() -> None:
    with pytest.raises(CatalogError):
        merge_catalog(config(), [graph("a"), graph("a")], UPSTREAM)
