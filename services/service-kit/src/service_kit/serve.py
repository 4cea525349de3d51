"""What each service's CLI shares: the ``--host``/``--port`` options and running uvicorn.

Every server runs with :data:`service_kit.framing.PROTOCOL`, so garbled HTTP framing is answered
in the OpenAI envelope too, not with uvicorn's plain-text 400, and without an access log (the
services log what matters themselves).
"""

from __future__ import annotations

import argparse
from typing import Any

import uvicorn

from service_kit import framing


def add_bind_options(parser: argparse.ArgumentParser, *, env_prefix: str, port: int) -> None:
    """``--host`` and ``--port``, which override the ``{env_prefix}HOST``/``PORT`` settings."""
    parser.add_argument("--host", help=f"bind address ({env_prefix}HOST, default 127.0.0.1)")
    parser.add_argument("--port", type=int, help=f"port ({env_prefix}PORT, default {port})")


def add_reload_option(parser: argparse.ArgumentParser, *, env_prefix: str) -> None:
    """``--reload`` (see :mod:`service_kit.reload`), which overrides ``{env_prefix}RELOAD``."""
    parser.add_argument(
        "--reload",
        action="store_true",
        default=None,
        help=f"restart on a change of the served code ({env_prefix}RELOAD, default off)",
    )


def bind_overrides(args: argparse.Namespace) -> dict[str, Any]:
    """The bind options given on the command line, as settings overrides."""
    given = {name: getattr(args, name) for name in ("host", "port")}
    return {name: value for name, value in given.items() if value is not None}


def serve(app: Any, *, host: str, port: int, log_level: str | None = None, **options: Any) -> None:
    """Run ``app`` until stopped; ``options`` go to ``uvicorn.run`` as they are."""
    uvicorn.run(
        app,
        host=host,
        port=port,
        log_level=log_level,
        access_log=False,
        http=framing.PROTOCOL,
        **options,
    )
