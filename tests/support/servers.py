"""Starting real server processes for tests: free ports, health polling, clean shutdown.

The implementation lives in ``scripts.servers`` (the benchmarks start the same servers); every
test takes it from here.
"""

from __future__ import annotations

from scripts.ports import free_port as free_port
from scripts.servers import ROOT as ROOT
from scripts.servers import SEARXNG_DIR as SEARXNG_DIR
from scripts.servers import SEARXNG_PYTHON as SEARXNG_PYTHON
from scripts.servers import Server as Server
from scripts.servers import serve as serve
from scripts.servers import serve_lgos as serve_lgos
from scripts.servers import serve_searxng as serve_searxng
