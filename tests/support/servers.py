"""Starting real server processes for tests: free ports, health polling, clean shutdown.

The implementation lives in ``lgos_stack`` (the stack and the benchmarks start the same
servers); every test takes it from here.
"""

from __future__ import annotations

from lgos_stack.paths import ROOT as ROOT
from lgos_stack.paths import SEARXNG_DIR as SEARXNG_DIR
from lgos_stack.paths import SEARXNG_PYTHON as SEARXNG_PYTHON
from lgos_stack.ports import free_port as free_port
from lgos_stack.processes import Server as Server
from lgos_stack.processes import serve as serve
from lgos_stack.servers import serve_lgos as serve_lgos
from lgos_stack.servers import serve_searxng as serve_searxng

OFFLINE_MODEL_ECHO = {"OFFLINE_MODEL_ECHO": "true"}
"""offline-model's debug switch: its answers quote everything the model was sent (the latest
message, every instruction, tool output and file id). Tests that assert on what reached the
model run it this way; the stack's default is the readable answer a person meets."""
