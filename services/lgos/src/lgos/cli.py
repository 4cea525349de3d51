"""``lgos serve MODULE:FACTORY``: serve a registry on embedded defaults."""

from __future__ import annotations

import argparse
import gc
import importlib
import logging
from collections.abc import Sequence

import uvicorn
from fastapi import FastAPI

from lgos.app import create_app
from lgos.config import GraphRegistry
from lgos.logs import configure_logging
from lgos.settings import LGOSSettings


def load_registry(target: str) -> GraphRegistry:
    """Import ``module:attr``; ``attr`` is a ``GraphRegistry`` or a zero-argument factory of one."""
    module_name, _, attr = target.partition(":")
    if not module_name or not attr:
        raise SystemExit(f"expected MODULE:FACTORY, got {target!r}")
    obj = getattr(importlib.import_module(module_name), attr)
    registry = obj() if callable(obj) and not isinstance(obj, GraphRegistry) else obj
    if not isinstance(registry, GraphRegistry):
        raise SystemExit(f"{target} did not produce a GraphRegistry")
    return registry


def build_app(target: str, settings: LGOSSettings) -> FastAPI:
    return create_app(load_registry(target), settings)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="lgos", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser("serve", help="serve a graph registry over the OpenAI API")
    serve.add_argument("target", help="MODULE:FACTORY returning a GraphRegistry")
    serve.add_argument("--host", help="bind address (LGOS_HOST, default 127.0.0.1)")
    serve.add_argument("--port", type=int, help="port (LGOS_PORT, default 3004)")
    args = parser.parse_args(argv)

    overrides = {k: v for k, v in (("host", args.host), ("port", args.port)) if v is not None}
    settings = LGOSSettings(**overrides)
    configure_logging(settings.log_level)
    app = build_app(args.target, settings)
    # Everything built so far (graphs, app, imported modules) lives for the whole process:
    # keep it out of the collector's generations so collections only scan per-request garbage.
    gc.freeze()
    logging.getLogger("lgos").info(
        "serving", extra={"models": list(app.state.lgos.registry), "port": settings.port}
    )
    uvicorn.run(
        app,
        host=settings.host,
        port=settings.port,
        log_level=settings.log_level,
        access_log=False,
        timeout_graceful_shutdown=5,
    )


if __name__ == "__main__":  # pragma: no cover
    main()
