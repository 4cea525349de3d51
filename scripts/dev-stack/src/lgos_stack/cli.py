"""The native (no-Docker) demo stack: every component as a local process on its fixed port.

    python scripts/devstack.py up            # foreground; Ctrl-C stops everything
    python scripts/devstack.py up --detach   # background; returns once every health check passes
    python scripts/devstack.py down          # stop a detached stack
    python scripts/devstack.py status
    python scripts/devstack.py restart chainlit   # one component of a detached stack
    python scripts/devstack.py sync  # publish LGOS's catalog to the gateway and Open WebUI

The gateway (LiteLLM) listens on 3000 with the key OPENAI_GATEWAY_API_KEY (a local default when
unset); its catalog is synced from LGOS once LGOS is healthy. dbhub serves the read-only MCP demo
database to the gateway. Re-sync after a graph change: `make gateway-sync` (the `sync` command):
LiteLLM restarts with the new catalog, Open WebUI's model entries follow, Chainlit re-reads it
within seconds; neither UI restarts.

Ports and the state folder can be overridden (tests run a private stack on free ports):
LGOS_PORT, LGOS_SECOND_PORT (the second instance, default 3015), LGOS_WORKER_PORT (health
only, default 3011), OFFLINE_MODEL_PORT, SEARXNG_PORT, POSTGRES_PORT, REDIS_PORT,
OPENAI_GATEWAY_PORT, MCP_DEMO_DB_PORT, FILES_PORT, EMBEDDINGS_PORT,
CHAINLIT_PORT, OPEN_WEBUI_PORT, PROMETHEUS_PORT, PHOENIX_PORT, DEVSTACK_STATE_DIR,
DEVSTACK_PGDATA (the PostgreSQL data folder;
as root it must be reachable by the lgos-dev user). FILES_API_KEYS sets the Files service's
bearer key(s).
DEVSTACK_SKIP names components (comma-separated) not to start, e.g. `open-webui`
(≈ 0.8 GB RAM). DEVSTACK_WITH names opt-in components to start as well: `phoenix`, the trace
viewer (≈ 14 s, ≈ 0.5 GB RAM), which then receives the traces of LGOS, its worker and Files.
"""

from __future__ import annotations

import argparse
import signal
import sys

from lgos_stack import runner


def say(line: str) -> None:
    # Progress lines must appear as they happen, also when stdout is a pipe.
    print(line, flush=True)


def warn(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    commands = parser.add_subparsers(dest="command", required=True)
    up_parser = commands.add_parser("up")
    up_parser.add_argument("--detach", action="store_true")
    commands.add_parser("down")
    commands.add_parser("status")
    restart_parser = commands.add_parser("restart")
    restart_parser.add_argument("component")
    commands.add_parser("sync")
    args = parser.parse_args(argv)
    # Started from a background job, this process inherits SIGINT ignored, and the servers it
    # starts would too (an ignored signal stays ignored across exec): each would then need the
    # SIGKILL that follows a stop's SIGINT 10 s later. Ctrl-C means stop, however it was started.
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    if args.command == "up":
        sys.exit(runner.up(args.detach, say, warn))
    elif args.command == "down":
        runner.down(say)
    elif args.command == "restart":
        runner.restart(args.component, say)
    elif args.command == "sync":
        runner.sync(say)
    else:
        sys.exit(runner.status(say))
