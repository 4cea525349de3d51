"""The local-only keys and logins the native stack defaults to, and the variables that override
them. Loopback-only stack: fixed local values are fine; set the variables for anything else."""

from __future__ import annotations

import os

FILES_DEV_KEY = "sk-files-local-only"
LGOS_DEV_KEY = "sk-lgos-local-only"
DEV_GATEWAY_KEY = "sk-lgos-local-dev"
# The UI's documented local login (ui/chainlit/README.md); CHAINLIT_USERNAME/PASSWORD override it.
CHAINLIT_DEV_USERNAME = "admin"
CHAINLIT_DEV_PASSWORD = "lgos-local-dev"
# Open WebUI's documented local admin (ui/open-webui/README.md); WEBUI_ADMIN_EMAIL/_PASSWORD
# override it.
OPEN_WEBUI_DEV_EMAIL = "admin@lgos.local"
OPEN_WEBUI_DEV_PASSWORD = "lgos-local-dev"


def gateway_key() -> str:
    return os.environ.get("OPENAI_GATEWAY_API_KEY") or DEV_GATEWAY_KEY


def lgos_key() -> str:
    """The key the gateway (and a developer) use for LGOS: LGOS_API_KEY, or the local default."""
    return os.environ.get("LGOS_API_KEY") or LGOS_DEV_KEY


def files_keys() -> str:
    """The Files service's accepted bearer keys (comma-separated): FILES_API_KEYS, or the local
    default."""
    return os.environ.get("FILES_API_KEYS", FILES_DEV_KEY)


def files_key() -> str:
    return files_keys().split(",")[0]


def chainlit_login() -> tuple[str, str]:
    return (
        os.environ.get("CHAINLIT_USERNAME", CHAINLIT_DEV_USERNAME),
        os.environ.get("CHAINLIT_PASSWORD", CHAINLIT_DEV_PASSWORD),
    )


def open_webui_admin() -> dict[str, str]:
    return {
        "WEBUI_ADMIN_EMAIL": os.environ.get("WEBUI_ADMIN_EMAIL", OPEN_WEBUI_DEV_EMAIL),
        "WEBUI_ADMIN_PASSWORD": os.environ.get("WEBUI_ADMIN_PASSWORD", OPEN_WEBUI_DEV_PASSWORD),
    }


def shown(variable: str, default: str) -> str:
    """What the stack prints for a secret: the variable's name when set, else the local default."""
    return f"${variable}" if os.environ.get(variable) else default
