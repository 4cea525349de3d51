"""The LiteLLM catalog merge: managed entries follow LGOS, operator entries never move."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from lgos_gateways.catalog import CatalogError, Graph
from lgos_gateways.litellm_catalog import MANAGED_BY, Upstream, deployments, merge_catalog

UPSTREAM = Upstream(api_bases=("http://lgos:3004/v1",), api_key="k")
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
    (entry,) = deployments(graph("simple-graph", "Streams."), UPSTREAM)
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


TWO = Upstream(api_bases=("http://127.0.0.1:3004/v1", "http://127.0.0.1:3015/v1"), api_key="k")


def test_two_instances_give_each_graph_two_deployments_under_one_name() -> None:
    merged, report = merge_catalog(config(OPERATOR), [graph("a"), graph("b")], TWO)
    served = [(m["model_name"], m["litellm_params"].get("api_base")) for m in merged["model_list"]]
    assert served == [
        ("gpt-small", None),
        ("lgos/a", "http://127.0.0.1:3004/v1"),
        ("lgos/a", "http://127.0.0.1:3015/v1"),
        ("lgos/b", "http://127.0.0.1:3004/v1"),
        ("lgos/b", "http://127.0.0.1:3015/v1"),
    ]
    assert report.added == ["lgos/a", "lgos/b"]
    again, same = merge_catalog(merged, [graph("a"), graph("b")], TWO)
    assert again == merged and not same.changed
    one, shrunk = merge_catalog(merged, [graph("a"), graph("b")], UPSTREAM)
    assert shrunk.updated == ["lgos/a", "lgos/b"]  # an instance left: its deployments go
    assert [m["model_name"] for m in one["model_list"]] == ["gpt-small", "lgos/a", "lgos/b"]


def test_each_upstream_is_named_once() -> None:
    with pytest.raises(CatalogError, match="name each LGOS upstream URL once"):
        Upstream(api_bases=("http://a/v1", "http://a/v1"), api_key="k")
    with pytest.raises(CatalogError):
        Upstream(api_bases=(), api_key="k")
