"""Starting real server processes for tests: free ports, health polling, clean shutdown.

The implementation lives in ``lgos_stack`` (the stack and the benchmarks start the same
servers); every test takes it from here.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import uvicorn
from lgos_stack.paths import ROOT as ROOT
from lgos_stack.paths import SEARXNG_DIR as SEARXNG_DIR
from lgos_stack.paths import SEARXNG_PYTHON as SEARXNG_PYTHON
from lgos_stack.ports import free_port as free_port
from lgos_stack.processes import Server as Server
from lgos_stack.processes import serve as serve
from lgos_stack.servers import serve_lgos as serve_lgos
from lgos_stack.servers import serve_searxng as serve_searxng
from starlette.applications import Starlette

OFFLINE_MODEL_ECHO = {"OFFLINE_MODEL_ECHO": "true"}
"""offline-model's debug switch: its answers quote everything the model was sent (the latest
message, every instruction, tool output and file id). Tests that assert on what reached the
model run it this way; the stack's default is the readable answer a person meets."""


@contextmanager
def model_proxy(module: str, upstream: Server, log: Path) -> Iterator[Server]:
    """A FAKE upstream module of tests/support (``--port``, ``--upstream``) in front of a real
    model server, started as its own process."""
    port = free_port()
    args = [module, "--port", str(port), "--upstream", f"{upstream.url}/v1"]
    with serve(args, port=port, env={}, log=log) as server:
        yield server


def run_proxy(description: str, create_app: Callable[[str], Starlette]) -> None:
    """The command line of such a FAKE upstream: ``--port P --upstream URL``."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--upstream", required=True, help="offline-model's /v1 base URL")
    args = parser.parse_args()
    uvicorn.run(
        create_app(args.upstream.rstrip("/") + "/"),
        host="127.0.0.1",
        port=args.port,
        log_level="warning",
    )
