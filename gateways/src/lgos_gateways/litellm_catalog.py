"""The LiteLLM side of the catalog sync: LGOS graphs as ``model_list`` entries (pure, no I/O).

Entries the sync owns carry ``model_info.managed_by``; every other entry belongs to the operator
and is kept exactly as written. UIs read ``model_info.lgos`` from LiteLLM's native ``/model/info``.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from lgos_gateways.catalog import CatalogError, Graph

MANAGED_BY = "lgos-catalog-sync"


@dataclass(frozen=True, slots=True)
class Upstream:
    """How LiteLLM reaches LGOS (may differ from the URL the sync read, e.g. in compose)."""

    api_base: str
    api_key: str


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


def deployment(graph: Graph, upstream: Upstream) -> dict[str, Any]:
    return {
        "model_name": graph.gateway_name,
        "litellm_params": {
            # openai/<id> + api_base: LiteLLM forwards /v1/responses natively and keeps Chat
            # Completions as real Chat Completions (no model_info.mode).
            "model": f"openai/{graph.id}",
            "api_base": upstream.api_base,
            "api_key": upstream.api_key,
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
    previous = {entry["model_name"]: entry for entry in models if is_managed(entry)}
    wanted = [deployment(graph, upstream) for graph in graphs]
    names = [entry["model_name"] for entry in wanted]
    if len(set(names)) != len(names):
        raise CatalogError("two graphs map to the same gateway model name")
    clashes = sorted({entry.get("model_name") for entry in operator} & set(names))
    if clashes:
        raise CatalogError(
            f"operator-owned model entries already use {', '.join(clashes)}; "
            "rename them or remove them before syncing"
        )
    report = SyncReport(
        added=[n for n in names if n not in previous],
        updated=[e["model_name"] for e in wanted if previous.get(e["model_name"], e) != e],
        removed=sorted(set(previous) - set(names)),
        unchanged=[e["model_name"] for e in wanted if previous.get(e["model_name"]) == e],
    )
    return {**config, "model_list": operator + wanted}, report
