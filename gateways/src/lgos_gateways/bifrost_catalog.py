"""The Bifrost side of the catalog sync (pure): pricing rows, attributes, config checks.

Bifrost never ran on this project's machines (no Docker engine, no installable build). What this
module relies on comes from Bifrost's documentation and source (docs/how-to/bifrost.md);
targeted version: the compose image tag (v1.5.13).

- Models are addressed ``<provider>/<model>``; LGOS graphs are ``lgos/<graph>``.
- From v1.4.17 ``/v1/models`` needs a pricing row per model (an air-gapped install without them
  panicked), so the sync writes base rows for every graph into the ``file://`` datasheet that
  ``framework.pricing.pricing_url`` names (file URLs work from v1.5.8), then force-syncs.
- Catalog entries carry ``additional_attributes: map[string]string`` kept across pricing syncs:
  strings only, so the complete ``lgos`` extension is published as a JSON string.
"""

from __future__ import annotations

import json
from typing import Any

from lgos_gateways.catalog import Graph

PROVIDER = "lgos"
FILES_PROVIDER = "lgos-files"
ATTRIBUTE = "lgos"
# Requests the LGOS provider must allow. Bifrost treats a missing `allowed_requests` as "all
# allowed" (documented); a given one disables every field left out, and the field names for
# Responses retrieve/cancel were not in the docs found here, so omitting it is the safe choice.
LGOS_REQUESTS = (
    "list_models",
    "chat_completion",
    "chat_completion_stream",
    "responses",
    "responses_stream",
)
FILES_REQUESTS = ("file_upload", "file_list", "file_retrieve", "file_delete", "file_content")


def lgos_attribute(graph: Graph) -> str:
    """The extension as one JSON string (map values must be strings); stable key order."""
    return json.dumps(graph.lgos, sort_keys=True, separators=(",", ":"))


def pricing_rows(graphs: list[Graph], provider: str = PROVIDER) -> dict[str, dict[str, Any]]:
    """Base datasheet rows: graphs are priced at zero at the gateway (their model calls are
    billed where they happen); the rows exist so Bifrost lists and routes the models."""
    return {
        f"{provider}/{graph.id}": {
            "provider": provider,
            "mode": "responses",
            "input_cost_per_token": 0.0,
            "output_cost_per_token": 0.0,
        }
        for graph in graphs
    }


def _allowed(provider: dict[str, Any], requests: tuple[str, ...]) -> list[str]:
    """The requests in ``requests`` this provider config does not allow."""
    allowed = provider.get("custom_provider_config", {}).get("allowed_requests")
    if allowed is None:
        return []
    return [name for name in requests if allowed.get(name) is not True]


def check_config(config: dict[str, Any]) -> list[str]:
    """Problems with the fields the sync and the demo rely on (empty when usable)."""
    problems: list[str] = []
    providers = config.get("providers", {})
    for name, requests in ((PROVIDER, LGOS_REQUESTS), (FILES_PROVIDER, FILES_REQUESTS)):
        provider = providers.get(name)
        if provider is None:
            problems.append(f"providers.{name} is missing")
            continue
        custom = provider.get("custom_provider_config", {})
        if custom.get("base_provider_type") != "openai":
            problems.append(f"providers.{name} must be an OpenAI-compatible custom provider")
        if not provider.get("network_config", {}).get("base_url"):
            problems.append(f"providers.{name}.network_config.base_url is missing")
        if not provider.get("keys"):
            problems.append(f"providers.{name}.keys is empty")
        problems += [f"providers.{name} does not allow {r}" for r in _allowed(provider, requests)]
    if config.get("client", {}).get("enforce_auth_on_inference") is not True:
        problems.append("client.enforce_auth_on_inference must be true")
    if config.get("config_store", {}).get("enabled") is not True:
        problems.append("config_store.enabled must be true (catalog changes go through the API)")
    pricing_url = config.get("framework", {}).get("pricing", {}).get("pricing_url", "")
    if not pricing_url.startswith("file://"):
        problems.append(
            "framework.pricing.pricing_url must be the file:// datasheet the sync writes"
        )
    auth = config.get("governance", {}).get("auth_config", {})
    if auth.get("is_enabled") is not True:
        problems.append("governance.auth_config must be enabled (the management API is admin-only)")
    keys = config.get("governance", {}).get("virtual_keys") or []
    if not keys:
        problems.append("governance.virtual_keys must hold the gateway key")
    for key in keys:
        granted = {c.get("provider") for c in key.get("provider_configs", [])}
        if PROVIDER not in granted:
            problems.append(f"virtual key {key.get('id')} does not grant provider {PROVIDER}")
        # From v1.5.0 an empty key_ids denies every provider key; ["*"] allows them all.
        if any(c.get("key_ids") != ["*"] for c in key.get("provider_configs", [])):
            problems.append(f"virtual key {key.get('id')} must use key_ids ['*']")
    return problems


def pricing_path(config: dict[str, Any]) -> str:
    """The datasheet path inside the Bifrost container (from the file:// pricing URL)."""
    url: str = config["framework"]["pricing"]["pricing_url"]
    return url.removeprefix("file://")
