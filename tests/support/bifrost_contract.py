"""A FAKE Bifrost: only the documented endpoints the catalog sync uses. Not Bifrost.

No Bifrost build runs on this project's machines (no Docker engine; its npm package downloads a
binary at run time). This server records the documented contract so the sync can be tested:

- ``GET /health``: docs "Bifrost's documented contract".
- ``POST /api/pricing/force-sync``: reloads the datasheet named by ``framework.pricing.pricing_url``
  (file:// from v1.5.8: docs.getbifrost.ai/deployment-guides/how-to/airgapped); route registered
  by ConfigHandler in Bifrost's transports/bifrost-http/handlers/config.go.
- ``GET /v1/models?provider=``: docs/openapi/paths/inference/models.yaml; entries carry
  ``additional_attributes`` (map[string]string, stored with the pricing row), and a
  model without a pricing row is not listed (v1.4.17+ needs rows).
- ``GET /openai/v1/models``: the OpenAI-shaped conversion, which drops ``additional_attributes``.
- Inference routes need the virtual key (``client.enforce_auth_on_inference``); management routes
  need admin auth (``governance.auth_config``; Basic accepted): docs.getbifrost.ai
  deployment-guides/config-json/governance and changelogs/v1.5.13.
- ``PUT /api/models/catalog``: Bifrost's catalog upsert (handlers/providers.go, PR
  maximhq/bifrost#3829): a JSON array of ``{provider, model, additional_attributes}``, 204; the
  whole batch is refused when any entry lacks a pricing row (the handler answers 500); an empty
  map clears the attributes. Values must be strings (map[string]string).
"""

from __future__ import annotations

import argparse
import base64
import json
import secrets
from pathlib import Path
from typing import Any

import uvicorn
from fastapi import FastAPI, HTTPException, Request, Response

ATTRIBUTES_ROUTE = "/api/models/catalog"


def create_app(pricing_file: Path, admin: tuple[str, str], virtual_key: str) -> FastAPI:
    app = FastAPI()
    rows: dict[str, dict[str, Any]] = {}
    attributes: dict[str, dict[str, str]] = {}

    def require_admin(request: Request) -> None:
        expected = base64.b64encode(f"{admin[0]}:{admin[1]}".encode()).decode()
        given = request.headers.get("authorization", "")
        if not secrets.compare_digest(given, f"Basic {expected}"):
            raise HTTPException(401, "admin authentication required")

    def require_key(request: Request) -> None:
        if request.headers.get("authorization") != f"Bearer {virtual_key}":
            raise HTTPException(401, "virtual key required")

    @app.get("/health")
    async def health() -> dict[str, str]:
        return {"status": "ok"}

    @app.post("/api/pricing/force-sync")
    async def force_sync(request: Request) -> dict[str, str]:
        require_admin(request)
        # Whether a sync deletes rows the datasheet no longer lists is not documented; the fake
        # keeps them (the harder case for the sync: a vanished graph stays listed, so its
        # attributes must be cleared).
        rows.update(json.loads(pricing_file.read_text()))
        return {"status": "success", "message": "pricing sync triggered"}

    @app.put(ATTRIBUTES_ROUTE, status_code=204)
    async def upsert_catalog(request: Request) -> Response:
        require_admin(request)
        entries = await request.json()
        if not isinstance(entries, list):
            raise HTTPException(400, "invalid request format")
        updates: dict[str, dict[str, str]] = {}
        for entry in entries:
            model, provider = entry.get("model", "").strip(), entry.get("provider", "").strip()
            if not model or not provider:
                raise HTTPException(400, "model and provider are required for every catalog entry")
            values = entry.get("additional_attributes") or {}
            if not all(isinstance(v, str) for v in values.values()):
                raise HTTPException(400, "additional_attributes values must be strings")
            updates[f"{provider}/{model}"] = dict(values)
        missing = sorted(set(updates) - set(rows))
        if missing:
            raise HTTPException(500, f"failed to upsert catalog entries: no pricing row {missing}")
        for model_id, values in updates.items():
            attributes[model_id] = values
        return Response(status_code=204)

    def listed(provider: str | None, with_attributes: bool) -> dict[str, Any]:
        data = []
        for model_id, row in sorted(rows.items()):
            if provider and row.get("provider") != provider:
                continue
            entry: dict[str, Any] = {"id": model_id, "object": "model", "owned_by": row["provider"]}
            if with_attributes and attributes.get(model_id):
                entry["additional_attributes"] = attributes[model_id]
            data.append(entry)
        return {"data": data}

    @app.get("/v1/models")
    async def models(request: Request, provider: str | None = None) -> dict[str, Any]:
        require_key(request)
        return listed(provider, with_attributes=True)

    @app.get("/openai/v1/models")
    async def openai_models(request: Request) -> dict[str, Any]:
        require_key(request)
        return {"object": "list", **listed(None, with_attributes=False)}

    return app


def main() -> None:
    parser = argparse.ArgumentParser(description="FAKE Bifrost (documented contract only)")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--pricing-file", type=Path, required=True)
    parser.add_argument("--admin", required=True, help="user:password")
    parser.add_argument("--virtual-key", required=True)
    args = parser.parse_args()
    user, _, password = args.admin.partition(":")
    app = create_app(args.pricing_file, (user, password), args.virtual_key)
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
