"""Install or update the LGOS pipe in a running Open WebUI, through its admin API (idempotent).

    python ui/open-webui/install_pipe.py --url http://127.0.0.1:3003

Signs in as the admin (WEBUI_ADMIN_EMAIL / WEBUI_ADMIN_PASSWORD, which Open WebUI creates at
its first start), creates the Function ``lgos`` from ``lgos_pipe.py`` or updates it when its code
changed, makes sure it is active (``toggle`` flips, so it is read first) and writes its valves:
the gateway's URL, type and key. The valves stay server-side; the browser never sees the key.

Then it keeps one model entry per graph in step with the gateway's catalog (stale ones are
removed): the graph's description, no Open WebUI file extraction (the graph reads attachments
through the Files service), vision for graphs reading attachments (images arrive inline and the
pipe uploads them), the gateway's MCP tool server for ``mcp_tools`` graphs, and the
graph's ``client_settings`` declared as chat variables (a form per chat in Open WebUI), and the
graph's example prompts (``lgos.examples``) as the model's suggestion prompts.

What it did, or why it failed, is written as service_kit's JSON log lines on stderr
(``LGOS_LOG_LEVEL``, like the gateway jobs); never the admin password or the gateway key.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
import time
from pathlib import Path
from typing import Any

import httpx
from lgos_ui import LIMITED_NOTICE, CatalogError, GraphEntry, fetch_catalog, offers_mcp
from lgos_ui.open_webui import suggestion_prompts, variables_prompt
from lgos_ui.tools import FILE_INPUTS_FEATURE
from service_kit.logs import configure_logging

FUNCTION_ID = "lgos"
PIPE_FILE = Path(__file__).with_name("lgos_pipe.py")
MCP_SERVER_ID = "gw"
"""The gateway's MCP endpoint as an Open WebUI tool server (TOOL_SERVER_CONNECTIONS' info.id)."""
GENERATED = "lgos_generated"
EVERYONE = [{"principal_type": "user", "principal_id": "*", "permission": "read"}]

log = logging.getLogger("lgos_open_webui_setup")


class SetupError(RuntimeError):
    """Open WebUI refused a step; the message says which and why."""


def _check(response: httpx.Response, step: str) -> Any:
    if response.status_code != 200:
        raise SetupError(f"{step}: HTTP {response.status_code} {response.text[:300]}")
    return response.json()


def sign_in(client: httpx.Client, email: str, password: str) -> None:
    body = _check(
        client.post("/api/v1/auths/signin", json={"email": email, "password": password}),
        "sign in as the admin",
    )
    client.headers["Authorization"] = f"Bearer {body['token']}"


def install(client: httpx.Client, content: str, valves: dict[str, str]) -> dict[str, bool]:
    """Bring the Function to ``content`` and ``valves``; returns what had to change."""
    changed = {"created": False, "updated": False, "activated": False}
    existing = client.get(f"/api/v1/functions/id/{FUNCTION_ID}")
    meta = {"description": "LangGraph graphs served by LGOS, through the stack's gateway."}
    form = {"id": FUNCTION_ID, "name": "LGOS", "content": content, "meta": meta}
    # A missing function answers 401 or 404 depending on the version; anything else is an error.
    if existing.status_code in (401, 404):
        current = _check(client.post("/api/v1/functions/create", json=form), "create the pipe")
        changed["created"] = True
    else:
        current = _check(existing, "read the pipe")
        if current.get("content") != content:
            current = _check(
                client.post(f"/api/v1/functions/id/{FUNCTION_ID}/update", json=form),
                "update the pipe",
            )
            changed["updated"] = True
    if not current.get("is_active"):
        _check(client.post(f"/api/v1/functions/id/{FUNCTION_ID}/toggle"), "activate the pipe")
        changed["activated"] = True
    _check(
        client.post(f"/api/v1/functions/id/{FUNCTION_ID}/valves/update", json=valves),
        "write the pipe's valves",
    )
    return changed


def model_form(entry: GraphEntry, mcp_graphs: tuple[str, ...] = ()) -> dict[str, Any]:
    """The model entry that dresses the pipe's ``lgos.<graph>`` model in the graph's metadata."""
    capabilities = {
        # Attachments reach the graph as input_file through the Files service: Open WebUI must
        # neither extract nor inject them itself.
        "file_context": False,
        "builtin_tools": False,
        "file_upload": not entry.limited,
        "citations": True,
        # Open WebUI accepts images only for vision models and sends them inline; the pipe
        # uploads them, so graphs reading attachments get images as files too.
        "vision": not entry.limited and entry.has(FILE_INPUTS_FEATURE),
        "web_search": False,
        "image_generation": False,
        "code_interpreter": False,
        "usage": False,
    }
    meta: dict[str, Any] = {
        "description": entry.description or LIMITED_NOTICE,
        "capabilities": capabilities,
        # The graph's own example prompts; an empty list shows none (never Open WebUI's generic
        # suggestions, which DEFAULT_PROMPT_SUGGESTIONS=[] also turns off stack-wide).
        "suggestion_prompts": [] if entry.limited else suggestion_prompts(entry),
        GENERATED: True,
    }
    if offers_mcp(entry, mcp_graphs):
        meta["toolIds"] = [f"server:mcp:{MCP_SERVER_ID}"]
    params: dict[str, Any] = {}
    prompt = "" if entry.limited else variables_prompt(entry)
    if prompt:
        params["system"] = prompt
    return {
        "id": f"{FUNCTION_ID}.{entry.graph}",
        "base_model_id": None,
        "name": entry.graph,
        "meta": meta,
        "params": params,
        "access_grants": EVERYONE,
        "is_active": True,
    }


def generated_models(client: httpx.Client) -> dict[str, dict[str, Any]]:
    """Every model entry this job created earlier, by id (they dress base models: ``/base``)."""
    body = _check(client.get("/api/v1/models/base"), "list the model entries")
    return {
        item["id"]: item
        for item in body
        if isinstance(item, dict) and (item.get("meta") or {}).get(GENERATED)
    }


def differs(current: dict[str, Any], form: dict[str, Any]) -> bool:
    """Only what this job sets counts (Open WebUI adds keys of its own to ``meta``)."""
    meta = current.get("meta") or {}
    return (
        current.get("name") != form["name"]
        or any(meta.get(k) != v for k, v in form["meta"].items())
        or (current.get("params") or {}) != form["params"]
    )


def sync_models(
    client: httpx.Client, entries: list[GraphEntry], mcp_graphs: tuple[str, ...] = ()
) -> dict[str, list[str]]:
    existing = generated_models(client)
    changed: dict[str, list[str]] = {"created": [], "updated": [], "removed": []}
    wanted = {f"{FUNCTION_ID}.{entry.graph}": model_form(entry, mcp_graphs) for entry in entries}
    for model_id, form in wanted.items():
        current = existing.get(model_id)
        if current is None:
            response = client.post("/api/v1/models/create", json=form)
            if response.status_code == 401 and "taken" in response.text.lower():
                # A hand-made entry with this id: take it over.
                response = client.post("/api/v1/models/model/update", json=form)
            _check(response, f"create the model {model_id}")
            changed["created"].append(model_id)
        elif differs(current, form):
            _check(client.post("/api/v1/models/model/update", json=form), f"update {model_id}")
            changed["updated"].append(model_id)
    for model_id in existing.keys() - wanted.keys():
        _check(client.post("/api/v1/models/model/delete", json={"id": model_id}), "remove")
        changed["removed"].append(model_id)
    return changed


def read_catalog(gateway_url: str, key: str, gateway_type: str) -> list[GraphEntry]:
    async def read() -> list[GraphEntry]:
        async with httpx.AsyncClient(timeout=30.0) as http:
            return await fetch_catalog(http, gateway_url, key, gateway_type)  # type: ignore[arg-type]

    return asyncio.run(read())


def healthy(client: httpx.Client) -> bool:
    try:
        return client.get("/health").status_code == 200
    except httpx.TransportError:
        return False


def wait_ready(client: httpx.Client, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not healthy(client):
        if time.monotonic() > deadline:
            raise SetupError(f"Open WebUI at {client.base_url} not healthy after {timeout:.0f}s")
        time.sleep(0.5)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default=os.environ.get("OPEN_WEBUI_URL", "http://127.0.0.1:3003"))
    parser.add_argument("--admin-email", default=os.environ.get("WEBUI_ADMIN_EMAIL"))
    parser.add_argument("--admin-password", default=os.environ.get("WEBUI_ADMIN_PASSWORD"))
    parser.add_argument(
        "--gateway-url", default=os.environ.get("OPENAI_GATEWAY_URL", "http://127.0.0.1:3000/v1")
    )
    parser.add_argument("--gateway-type", default=os.environ.get("OPENAI_GATEWAY_TYPE", "litellm"))
    parser.add_argument(
        "--mcp-graphs",
        default=os.environ.get("LGOS_MCP_GRAPHS", ""),
        help="extra graphs (comma-separated) offered the gateway's MCP tools",
    )
    parser.add_argument("--wait", type=float, default=60.0, help="seconds to wait for /health")
    args = parser.parse_args(argv)
    configure_logging(os.environ.get("LGOS_LOG_LEVEL", "info"))
    key = os.environ.get("OPENAI_GATEWAY_API_KEY")
    if not (args.admin_email and args.admin_password and key):
        parser.error("needs WEBUI_ADMIN_EMAIL, WEBUI_ADMIN_PASSWORD and OPENAI_GATEWAY_API_KEY")
    mcp_graphs = tuple(g.strip() for g in args.mcp_graphs.split(",") if g.strip())
    valves = {
        "MCP_GRAPHS": ",".join(mcp_graphs),
        "GATEWAY_URL": args.gateway_url,
        "GATEWAY_TYPE": args.gateway_type,
        "GATEWAY_API_KEY": key,
    }
    with httpx.Client(base_url=args.url, timeout=30.0) as client:
        try:
            wait_ready(client, args.wait)
            sign_in(client, args.admin_email, args.admin_password)
            changed = install(client, PIPE_FILE.read_text(), valves)
            models = sync_models(
                client, read_catalog(args.gateway_url, key, args.gateway_type), mcp_graphs
            )
        except (SetupError, CatalogError, httpx.HTTPError) as exc:
            log.error("open-webui setup failed", extra={"error": str(exc)})
            return 1
    done = [name for name, happened in changed.items() if happened]
    log.info("pipe installed", extra={"url": args.url, "changed": done})
    # Nested: "created" is a LogRecord attribute, not a field a call may set.
    log.info("model entries synced", extra={"models": models})
    return 0


if __name__ == "__main__":
    sys.exit(main())
