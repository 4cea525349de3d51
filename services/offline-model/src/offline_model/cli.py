"""``offline-model``: run the deterministic model server."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

import http_framing
import uvicorn

from offline_model.app import create_app
from offline_model.settings import OfflineModelSettings


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="offline-model", description=__doc__)
    parser.add_argument("--host")
    parser.add_argument("--port", type=int)
    args = parser.parse_args(argv)
    overrides = {k: v for k, v in (("host", args.host), ("port", args.port)) if v is not None}
    settings = OfflineModelSettings(**overrides)
    uvicorn.run(
        create_app(settings),
        host=settings.host,
        port=settings.port,
        access_log=False,
        # Garbled HTTP framing gets the OpenAI envelope too, not uvicorn's plain-text 400.
        http=http_framing.PROTOCOL,
    )
