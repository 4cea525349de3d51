"""Garbage-collector tuning for a long-running LGOS process (``LGOS_GC_THRESHOLDS``).

Measured with a thousand open streams in one process (docs/project/reliability.md): with CPython's
thresholds (700, 10, 10) a full collection ran every second or so, each walking every live
object of every open run for 0.3 to 0.5 s with the event loop stopped; the collector took over
half the process's CPU. A served request leaves no cyclic garbage behind (also measured), so
LGOS keeps CPython's young-generation thresholds and makes full collections 100 times rarer.
"""

from __future__ import annotations

import gc
import logging

logger = logging.getLogger("lgos.gc")


def tune_collector(thresholds: tuple[int, int, int] | None) -> None:
    """Freeze what exists now (modules, graphs, the app: it lives as long as the process) and
    set the collector's thresholds; ``None`` keeps CPython's."""
    gc.collect()
    # Frozen objects are never scanned again, so a collection walks per-request objects only.
    gc.freeze()
    if thresholds is not None:
        gc.set_threshold(*thresholds)
    logger.info(
        "collector tuned", extra={"frozen": gc.get_freeze_count(), "thresholds": gc.get_threshold()}
    )
