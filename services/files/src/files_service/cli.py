"""``files-service``: run the Files service (settings from ``FILES_*``, flags override)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

import http_framing
import uvicorn

from files_service.app import create_app
from files_service.logs import configure
from files_service.settings import FilesSettings


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="files-service", description=__doc__)
    parser.add_argument("--host")
    parser.add_argument("--port", type=int)
    args = parser.parse_args(argv)
    overrides = {k: v for k, v in (("host", args.host), ("port", args.port)) if v is not None}
    settings = FilesSettings(**overrides)
    configure(settings.log_level)
    uvicorn.run(
        create_app(settings),
        host=settings.host,
        port=settings.port,
        access_log=False,
        log_level=settings.log_level,
        # Garbled HTTP framing gets the OpenAI envelope too, not uvicorn's plain-text 400.
        http=http_framing.PROTOCOL,
    )
