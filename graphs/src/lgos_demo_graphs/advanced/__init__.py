"""advanced-graph: the showcase graph (see ``graph``); its knowledge interface in ``knowledge``."""

from lgos_demo_graphs.advanced.graph import CONFIG, NAME, build

__all__ = ["CONFIG", "NAME", "build"]
