"""``files-service``: run the Files service (settings from ``FILES_*``, flags override)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from service_kit.logs import configure_logging
from service_kit.serve import add_bind_options, bind_overrides, serve
from service_kit.tracing import configure_tracing

from files_service.app import create_app
from files_service.settings import FilesSettings


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="files-service", description=__doc__)
    add_bind_options(parser, env_prefix="FILES_", port=3006)
    settings = FilesSettings(**bind_overrides(parser.parse_args(argv)))
    configure_logging(settings.log_level, "files_service")
    configure_logging(settings.log_level, "service_kit")
    configure_tracing("files")
    app = create_app(settings)
    serve(app, host=settings.host, port=settings.port, log_level=settings.log_level)
