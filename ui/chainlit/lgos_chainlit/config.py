"""The app's settings, from the environment (documented in ui/chainlit/README.md)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

from lgos_ui import GatewayType
from lgos_ui.catalog import DEFAULT_GRAPH

DEFAULT_USERNAME = "admin"
DEFAULT_PASSWORD = "lgos-local-dev"
LOG_LEVELS = ("debug", "info", "warning", "error")


def _list(value: str) -> tuple[str, ...]:
    return tuple(v.strip() for v in value.split(",") if v.strip())


@dataclass(frozen=True)
class AppSettings:
    gateway_url: str
    # Deliberately not OPENAI_API_KEY: `chainlit run` replaces that one when CI=true.
    gateway_key: str
    gateway_type: GatewayType
    database_url: str | None
    username: str
    password: str
    catalog_ttl: float
    poll_interval: float
    files_dir: Path = field(default=Path(".elements"))
    """Where shown files and attachments are kept for reloaded threads."""
    mcp_graphs: tuple[str, ...] = field(default=())
    default_graph: str = DEFAULT_GRAPH
    """The profile a new chat opens on when the gateway serves it (else the catalog's first)."""
    log_level: str = "info"
    """The level of the app's own JSON log lines (:mod:`lgos_chainlit.logs`)."""

    @classmethod
    def from_env(cls) -> AppSettings:
        gateway_type = os.environ.get("OPENAI_GATEWAY_TYPE", "litellm").strip().lower()
        if gateway_type not in ("litellm", "bifrost"):
            raise SystemExit(
                f"OPENAI_GATEWAY_TYPE must be litellm or bifrost, not {gateway_type!r}"
            )
        log_level = os.environ.get("CHAINLIT_LOG_LEVEL", "info").strip().lower()
        if log_level not in LOG_LEVELS:
            raise SystemExit(f"CHAINLIT_LOG_LEVEL must be one of {', '.join(LOG_LEVELS)}")
        return cls(
            gateway_url=os.environ.get("OPENAI_GATEWAY_BASE_URL", "http://127.0.0.1:3000/v1"),
            gateway_key=os.environ.get("OPENAI_GATEWAY_API_KEY", "sk-lgos-local-dev"),
            gateway_type=cast(GatewayType, gateway_type),
            database_url=os.environ.get("CHAINLIT_DATABASE_URL") or None,
            username=os.environ.get("CHAINLIT_USERNAME", DEFAULT_USERNAME),
            password=os.environ.get("CHAINLIT_PASSWORD", DEFAULT_PASSWORD),
            catalog_ttl=float(os.environ.get("CHAINLIT_CATALOG_TTL", "5")),
            poll_interval=float(os.environ.get("CHAINLIT_POLL_INTERVAL", "0.5")),
            files_dir=Path(
                os.environ.get("CHAINLIT_FILES_DIR")
                or Path(os.environ.get("CHAINLIT_APP_ROOT", os.getcwd())) / ".elements"
            ),
            mcp_graphs=_list(os.environ.get("CHAINLIT_MCP_GRAPHS", "")),
            default_graph=os.environ.get("CHAINLIT_DEFAULT_GRAPH", "").strip() or DEFAULT_GRAPH,
            log_level=log_level,
        )
