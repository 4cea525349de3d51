"""Structured logging: one JSON object a line, the one shape every first-party process writes.

Each line carries ``ts``, ``level``, ``logger`` and ``event`` (the message), then the fields of
the request or job it belongs to (:mod:`service_kit.context`: request id, trace id, response id,
run id, model, scope hash, status, duration), then every ``extra`` field the call passed (which
wins over a context field of the same name), then ``exception`` when there is one.

Standard library only, apart from orjson when it is installed: the UIs' backends (Chainlit,
the Open WebUI pipe) log in this shape from their own pinned venvs, which have no orjson.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Callable
from typing import Any

from service_kit.context import FIELDS, current


def _stdlib_dumps(entry: dict[str, Any]) -> str:
    # The bytes orjson writes for the same entry: compact, UTF-8 kept as is.
    return json.dumps(entry, default=str, ensure_ascii=False, separators=(",", ":"))


_dumps: Callable[[dict[str, Any]], str] = _stdlib_dumps
try:
    import orjson
except ModuleNotFoundError:
    pass
else:

    def _orjson_dumps(entry: dict[str, Any]) -> str:
        return orjson.dumps(entry, default=str).decode()

    _dumps = _orjson_dumps

_STANDARD = set(vars(logging.makeLogRecord({}))) | {"message", "asctime"}


class JSONFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "ts": self.formatTime(record, "%Y-%m-%dT%H:%M:%S"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "event": record.getMessage(),
        }
        bound = current()
        entry.update({k: bound[k] for k in FIELDS if k in bound})
        entry.update({k: v for k, v in vars(record).items() if k not in _STANDARD})
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return _dumps(entry)


#: Libraries that log each outgoing request's full URL at info: a search query (what a user
#: typed) would reach the logs. Kept at warning unless the level is debug. (Newer openai
#: releases wrap httpx's successor, which logs as httpx2 / httpcore2.)
URL_LOGGERS = ("httpx", "httpcore", "httpx2", "httpcore2")


def configure_logging(level: str, logger: str | None = None, *, quiet_urls: bool = True) -> None:
    """JSON lines on stderr at ``level`` for ``logger`` (the root logger when ``None``).

    A named logger stops propagating, so its lines are not written twice and other libraries'
    loggers stay as they were. Below debug, :data:`URL_LOGGERS` only log warnings, unless
    ``quiet_urls`` is false (a plugin inside another application's process leaves that
    application's loggers alone).
    """
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JSONFormatter())
    target = logging.getLogger(logger)
    target.handlers[:] = [handler]
    target.setLevel(level.upper())
    if logger is not None:
        target.propagate = False
    if not quiet_urls:
        return
    quiet = logging.DEBUG if level.upper() == "DEBUG" else logging.WARNING
    for name in URL_LOGGERS:
        logging.getLogger(name).setLevel(quiet)
