"""The app's own log lines in the one JSON shape of every first-party process (service_kit's).

Only our loggers are shaped: ``lgos_chainlit`` (this app) and ``lgos_ui`` (the turn, the
catalog). Chainlit's and its libraries' lines stay as Chainlit writes them. A turn's lines carry
its request id, the ``X-Request-Id`` its gateway calls send.
"""

from __future__ import annotations

from service_kit.logs import configure_logging

LOGGERS = ("lgos_chainlit", "lgos_ui")


def configure(level: str) -> None:
    """JSON lines on stderr at ``level`` for :data:`LOGGERS`."""
    for name in LOGGERS:
        configure_logging(level, name)
