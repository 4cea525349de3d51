"""The LiteLLM side of the catalog sync: LGOS graphs as ``model_list`` entries (pure, no I/O).

Entries the sync owns carry ``model_info.managed_by``; every other entry belongs to the operator
and is kept exactly as written. With several LGOS instances each graph is one deployment per
instance, all under the graph's one model name: LiteLLM's router spreads requests over them and
retries a failed call on the group (``router_settings`` in the base config). UIs read
``model_info.lgos`` from LiteLLM's native ``/model/info``.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from lgos_gateways.catalog import CatalogError, Graph

MANAGED_BY = "lgos-catalog-sync"


@dataclass(frozen=True, slots=True)
class Upstream:
    """How LiteLLM reaches LGOS (may differ from the URL the sync read, e.g. in compose): one
    ``/v1`` base URL per instance, all serving the same registry."""

    api_bases: tuple[str, ...]
    api_key: str

    def __post_init__(self) -> None:
        if not self.api_bases or len(set(self.api_bases)) != len(self.api_bases):
            raise CatalogError("name each LGOS upstream URL once, and at least one")


@dataclass(frozen=True, slots=True)
class SyncReport:
    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.added or self.updated or self.removed)


def is_managed(entry: dict[str, Any]) -> bool:
    info = entry.get("model_info")
    return isinstance(info, dict) and info.get("managed_by") == MANAGED_BY


def deployments(graph: Graph, upstream: Upstream) -> list[dict[str, Any]]:
    """The graph's deployments, one per LGOS instance, in the order the URLs were given."""
    return [deployment(graph, api_base, upstream.api_key) for api_base in upstream.api_bases]


def deployment(graph: Graph, api_base: str, api_key: str) -> dict[str, Any]:
    return {
        "model_name": graph.gateway_name,
        "litellm_params": {
            # openai/<id> + api_base: LiteLLM forwards /v1/responses natively and keeps Chat
            # Completions as real Chat Completions (no model_info.mode).
            "model": f"openai/{graph.id}",
            "api_base": api_base,
            "api_key": api_key,
        },
        "model_info": {
            "managed_by": MANAGED_BY,
            # Graphs are missing from LiteLLM's cost map; the reported workaround for LiteLLM
            # faking the Responses stream (1.108.7 streamed natively here even without it).
            "supports_native_streaming": True,
            "lgos": copy.deepcopy(graph.lgos),
        },
    }


def merge_catalog(
    config: dict[str, Any], graphs: list[Graph], upstream: Upstream
) -> tuple[dict[str, Any], SyncReport]:
    """A new config whose managed entries are exactly ``graphs``; operator entries untouched."""
    models = config.get("model_list") or []
    operator = [entry for entry in models if not is_managed(entry)]
    previous: dict[str, list[dict[str, Any]]] = {}
    for entry in models:
        if is_managed(entry):
            previous.setdefault(entry["model_name"], []).append(entry)
    names = [graph.gateway_name for graph in graphs]
    if len(set(names)) != len(names):
        raise CatalogError("two graphs map to the same gateway model name")
    wanted = {graph.gateway_name: deployments(graph, upstream) for graph in graphs}
    clashes = sorted({entry.get("model_name") for entry in operator} & set(names))
    if clashes:
        raise CatalogError(
            f"operator-owned model entries already use {', '.join(clashes)}; "
            "rename them or remove them before syncing"
        )
    report = SyncReport(
        added=[n for n in names if n not in previous],
        updated=[n for n in names if n in previous and previous[n] != wanted[n]],
        removed=sorted(set(previous) - set(names)),
        unchanged=[n for n in names if previous.get(n) == wanted[n]],
    )
    served = [entry for name in names for entry in wanted[name]]
    return {**config, "model_list": operator + served}, report
