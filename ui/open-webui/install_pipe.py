"""Install or update the LGOS pipe in a running Open WebUI, through its admin API (idempotent).

    python ui/open-webui/install_pipe.py --url http://127.0.0.1:3003

Signs in as the admin (WEBUI_ADMIN_EMAIL / WEBUI_ADMIN_PASSWORD, which Open WebUI creates at
its first start), creates the Function ``lgos`` from ``lgos_pipe.py`` or updates it when its code
changed, makes sure it is active (``toggle`` flips, so it is read first) and writes its valves:
the gateway's URL, type and key. The valves stay server-side; the browser never sees the key.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

import httpx

FUNCTION_ID = "lgos"
PIPE_FILE = Path(__file__).with_name("lgos_pipe.py")


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


def install(
    client: httpx.Client, content: str, valves: dict[str, str]
) -> dict[str, bool]:
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


def wait_ready(client: httpx.Client, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            if client.get("/health").status_code == 200:
                return
        except httpx.TransportError:
            pass
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
    parser.add_argument("--wait", type=float, default=60.0, help="seconds to wait for /health")
    args = parser.parse_args(argv)
    key = os.environ.get("OPENAI_GATEWAY_API_KEY")
    if not (args.admin_email and args.admin_password and key):
        parser.error("needs WEBUI_ADMIN_EMAIL, WEBUI_ADMIN_PASSWORD and OPENAI_GATEWAY_API_KEY")
    valves = {
        "GATEWAY_URL": args.gateway_url,
        "GATEWAY_TYPE": args.gateway_type,
        "GATEWAY_API_KEY": key,
    }
    with httpx.Client(base_url=args.url, timeout=30.0) as client:
        try:
            wait_ready(client, args.wait)
            sign_in(client, args.admin_email, args.admin_password)
            changed = install(client, PIPE_FILE.read_text(), valves)
        except (SetupError, httpx.HTTPError) as exc:
            print(f"open-webui setup failed: {exc}", file=sys.stderr)
            return 1
    done = ", ".join(name for name, happened in changed.items() if happened) or "unchanged"
    print(f"LGOS pipe in {args.url}: {done}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
