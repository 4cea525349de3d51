"""Structured logging: one JSON object a line, the one shape every first-party process writes.

Each line carries ``ts``, ``level``, ``logger`` and ``event`` (the message), then every ``extra``
field the call passed, then ``exception`` when there is one.
"""

from __future__ import annotations

import logging
import sys
from typing import Any

import orjson

_STANDARD = set(vars(logging.makeLogRecord({}))) | {"message", "asctime"}


class JSONFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "ts": self.formatTime(record, "%Y-%m-%dT%H:%M:%S"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "event": record.getMessage(),
        }
        entry.update({k: v for k, v in vars(record).items() if k not in _STANDARD})
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return orjson.dumps(entry, default=str).decode()


def configure_logging(level: str, logger: str | None = None) -> None:
    """JSON lines on stderr at ``level`` for ``logger`` (the root logger when ``None``).

    A named logger stops propagating, so its lines are not written twice and other libraries'
    loggers stay as they were.
    """
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JSONFormatter())
    target = logging.getLogger(logger)
    target.handlers[:] = [handler]
    target.setLevel(level.upper())
    if logger is not None:
        target.propagate = False
