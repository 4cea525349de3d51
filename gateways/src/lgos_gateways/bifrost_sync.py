"""One-shot Bifrost catalog sync: pricing rows + ``additional_attributes.lgos`` per graph.

    lgos-bifrost-sync pricing --pricing-file F   # before Bifrost starts: the datasheet it loads
    lgos-bifrost-sync publish --bifrost-url U --pricing-file F   # against the running gateway

``publish`` rewrites the datasheet, force-syncs pricing, writes each graph's attributes through
the management API (admin Basic auth), removes attributes of vanished graphs, then verifies
native ``/v1/models`` (with the gateway key) shows every graph's ``lgos`` string. It never ran
against a live Bifrost here: tests use a fake of the documented contract (see bifrost_catalog).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
from service_kit.logs import configure_logging

from lgos_gateways.bifrost_catalog import (
    ATTRIBUTE,
    PROVIDER,
    check_config,
    lgos_attribute,
    pricing_rows,
)
from lgos_gateways.catalog import CatalogError, Graph, fetch_catalog, lgos_client

logger = logging.getLogger("lgos_gateways.bifrost_sync")

CONFIG = Path(__file__).resolve().parents[2] / "bifrost" / "config.json"
FORCE_SYNC_ROUTE = "/api/pricing/force-sync"
# Bifrost's catalog upsert (transports/bifrost-http/handlers/providers.go, PR maximhq/bifrost#3829):
# PUT a JSON array of {provider, model, additional_attributes}; 204 on success; the batch is
# all-or-nothing and every entry needs an existing pricing row; an empty map clears the column.
# The first release that ships it was not identified, and no Bifrost ran here: the verify step
# fails loudly if the route is wrong (override with --attributes-route).
ATTRIBUTES_ROUTE = "/api/models/catalog"


def write_pricing(path: Path, graphs: list[Graph]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile("w", dir=path.parent, delete=False, suffix=".tmp") as out:
        json.dump(pricing_rows(graphs), out, indent=2, sort_keys=True)
    os.replace(out.name, path)
    logger.info("pricing rows written", extra={"path": str(path), "rows": len(graphs)})


def listed_attributes(gateway: httpx.Client) -> dict[str, dict[str, str]]:
    """Native /v1/models for the LGOS provider: model id -> additional_attributes."""
    response = gateway.get("/v1/models", params={"provider": PROVIDER})
    response.raise_for_status()
    return {m["id"]: m.get("additional_attributes") or {} for m in response.json()["data"]}


def catalog_entries(attributes: dict[str, dict[str, str]]) -> list[dict[str, Any]]:
    """The upsert body: gateway model name (``lgos/<graph>``) -> its additional_attributes."""
    return [
        {
            "provider": PROVIDER,
            "model": name.removeprefix(f"{PROVIDER}/"),
            "additional_attributes": values,
        }
        for name, values in sorted(attributes.items())
    ]


def publish(admin: httpx.Client, gateway: httpx.Client, graphs: list[Graph], route: str) -> None:
    wanted = {graph.gateway_name for graph in graphs}
    # Vanished graphs are cleared while their pricing rows still exist (the upsert needs them).
    stale = sorted(set(listed_attributes(gateway)) - wanted)
    if stale:
        admin.put(route, json=catalog_entries({name: {} for name in stale})).raise_for_status()
        logger.info("attributes removed", extra={"models": stale})
    admin.post(FORCE_SYNC_ROUTE).raise_for_status()
    current = {graph.gateway_name: {ATTRIBUTE: lgos_attribute(graph)} for graph in graphs}
    admin.put(route, json=catalog_entries(current)).raise_for_status()
    logger.info("attributes published", extra={"models": len(graphs)})


def verify(gateway: httpx.Client, graphs: list[Graph], timeout: float) -> None:
    """Every graph carries its exact ``lgos`` string and no other model carries one.

    A vanished graph's pricing row may stay listed (Bifrost does not document whether a sync
    deletes rows), but without the attribute clients do not take it for a graph.
    """
    expected = {graph.gateway_name: graph.lgos for graph in graphs}
    deadline = time.monotonic() + timeout
    while True:
        served: dict[str, Any] = {}
        for model_id, attributes in listed_attributes(gateway).items():
            raw = attributes.get(ATTRIBUTE)
            if isinstance(raw, str):
                served[model_id] = json.loads(raw)
        if served == expected:
            return
        if time.monotonic() > deadline:
            missing = sorted(k for k in expected if served.get(k) != expected[k])
            extra = sorted(set(served) - set(expected))
            raise CatalogError(
                f"/v1/models does not show the catalog: wrong or missing {missing}, extra {extra}"
            )
        time.sleep(0.5)


def run(args: argparse.Namespace) -> int:
    config = json.loads(args.config.read_text())
    problems = check_config(config)
    if problems:
        raise CatalogError("gateways/bifrost/config.json: " + "; ".join(problems))
    with lgos_client(args.lgos_url) as lgos:
        graphs = fetch_catalog(lgos)
    write_pricing(args.pricing_file, graphs)
    if args.command == "pricing":
        return 0
    admin_auth = (os.environ["BIFROST_ADMIN_USERNAME"], os.environ["BIFROST_ADMIN_PASSWORD"])
    key = {"Authorization": f"Bearer {os.environ['OPENAI_GATEWAY_API_KEY']}"}
    with (
        httpx.Client(base_url=args.bifrost_url, auth=admin_auth, timeout=30.0) as admin,
        httpx.Client(base_url=args.bifrost_url, headers=key, timeout=30.0) as gateway,
    ):
        publish(admin, gateway, graphs, args.attributes_route)
        verify(gateway, graphs, args.timeout)
    logger.info("bifrost serves the catalog", extra={"models": len(graphs)})
    return 0


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("command", choices=["pricing", "publish"])
    parser.add_argument("--lgos-url", default=os.environ.get("LGOS_URL", "http://127.0.0.1:3004"))
    parser.add_argument("--bifrost-url", default=os.environ.get("BIFROST_URL"))
    parser.add_argument("--pricing-file", type=Path, required=True)
    parser.add_argument("--config", type=Path, default=CONFIG)
    parser.add_argument("--attributes-route", default=ATTRIBUTES_ROUTE)
    parser.add_argument("--timeout", type=float, default=30.0)
    args = parser.parse_args(argv)
    if args.command == "publish" and not args.bifrost_url:
        parser.error("publish needs --bifrost-url")
    return args


def main(argv: list[str] | None = None) -> None:
    configure_logging(os.environ.get("LGOS_LOG_LEVEL", "info"))
    try:
        sys.exit(run(parse_args(argv)))
    except (CatalogError, httpx.HTTPError, KeyError) as exc:
        logger.error("bifrost catalog sync failed", extra={"error": str(exc)})
        sys.exit(1)


if __name__ == "__main__":
    main()
