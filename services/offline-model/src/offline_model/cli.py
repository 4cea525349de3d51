"""``offline-model``: run the deterministic model server."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from service_kit.logs import configure_logging
from service_kit.serve import add_bind_options, bind_overrides, serve

from offline_model.app import create_app
from offline_model.settings import OfflineModelSettings


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="offline-model", description=__doc__)
    add_bind_options(parser, env_prefix="OFFLINE_MODEL_", port=3007)
    settings = OfflineModelSettings(**bind_overrides(parser.parse_args(argv)))
    for logger in ("offline_model", "service_kit"):
        configure_logging(settings.log_level, logger)
    serve(create_app(settings), host=settings.host, port=settings.port)
