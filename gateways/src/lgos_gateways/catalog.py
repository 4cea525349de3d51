"""Read the graph catalog from LGOS: ``GET /v1/models`` plus each ``GET /v1/models/{id}``."""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from typing import Any

import httpx

logger = logging.getLogger("lgos_gateways.catalog")

GATEWAY_PREFIX = "lgos/"
"""Gateway model names are ``lgos/<graph>`` (DESIGN.md, fixed names)."""


class CatalogError(RuntimeError):
    """The LGOS catalog cannot be published as is (nothing is written)."""


@dataclass(frozen=True, slots=True)
class Graph:
    id: str
    lgos: dict[str, Any]
    """The complete ``lgos`` extension from the model detail route."""

    @property
    def gateway_name(self) -> str:
        return f"{GATEWAY_PREFIX}{self.id}"


def lgos_client(lgos_url: str) -> httpx.Client:
    """A client for LGOS, keyed with ``LGOS_API_KEY`` when LGOS checks keys (LGOS_API_KEYS)."""
    key = os.environ.get("LGOS_API_KEY")
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    return httpx.Client(base_url=lgos_url, headers=headers, timeout=30.0)


def _json(response: httpx.Response) -> Any:
    response.raise_for_status()
    return response.json()


def fetch_catalog(client: httpx.Client) -> list[Graph]:
    """Every listed graph with its detail extension; duplicate ids are refused, not merged."""
    listing = _json(client.get("/v1/models"))
    ids = [entry["id"] for entry in listing["data"]]
    duplicates = sorted({graph_id for graph_id in ids if ids.count(graph_id) > 1})
    if duplicates:
        raise CatalogError(f"LGOS lists duplicate model ids: {', '.join(duplicates)}")
    graphs = []
    for graph_id in ids:
        detail = _json(client.get(f"/v1/models/{graph_id}"))
        lgos = detail.get("lgos")
        if detail.get("id") != graph_id or not isinstance(lgos, dict):
            raise CatalogError(f"LGOS model {graph_id!r} has no detail extension")
        graphs.append(Graph(id=graph_id, lgos=lgos))
    logger.info("catalog read", extra={"graphs": len(graphs)})
    return graphs
