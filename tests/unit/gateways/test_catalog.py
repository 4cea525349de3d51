"""Reading the LGOS catalog: every graph's detail extension; duplicate ids refused."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from lgos_gateways.catalog import CatalogError, fetch_catalog


def lgos(listing: list[str], details: dict[str, Any]) -> httpx.Client:
    def respond(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/v1/models":
            data = [{"id": i, "object": "model", "lgos": {"description": i}} for i in listing]
            return httpx.Response(200, json={"object": "list", "data": data})
        model = request.url.path.removeprefix("/v1/models/")
        if model not in details:
            return httpx.Response(404, json={"error": {"message": "no such model"}})
        return httpx.Response(200, json={"id": model, "object": "model", **details[model]})

    return httpx.Client(base_url="http://lgos.test", transport=httpx.MockTransport(respond))


def test_details_come_from_the_retrieve_route() -> None:
    full = {"description": "x", "client_settings": {"defaults": {"a": 1}}}
    [graph] = fetch_catalog(lgos(["x"], {"x": {"lgos": full}}))
    assert graph.id == "x" and graph.gateway_name == "lgos/x"
    assert graph.lgos == full


def test_duplicate_ids_are_refused() -> None:
    with pytest.raises(CatalogError, match="duplicate model ids: x"):
        fetch_catalog(lgos(["x", "y", "x"], {"x": {"lgos": {}}, "y": {"lgos": {}}}))


def test_a_detail_without_the_extension_is_refused() -> None:
    with pytest.raises(CatalogError, match="no detail extension"):
        fetch_catalog(lgos(["x"], {"x": {}}))


def test_a_listed_model_that_cannot_be_retrieved_fails() -> None:
    with pytest.raises(httpx.HTTPStatusError):
        fetch_catalog(lgos(["x"], {}))
