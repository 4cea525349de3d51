"""One-shot LiteLLM catalog sync: LGOS ``/v1/models`` -> the proxy's config file -> a restart.

LiteLLM's model admin API needs a database that cannot be set up offline, so the
catalog lives in the config file: the sync rewrites it atomically, asks the supervisor
(``lgos-litellm-serve``) to restart the proxy, then checks native ``/model/info`` serves it.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
import yaml
from service_kit.logs import configure_logging

from lgos_gateways.catalog import CatalogError, Graph, fetch_catalog, lgos_client
from lgos_gateways.litellm_catalog import Upstream, is_managed, merge_catalog
from lgos_gateways.litellm_serve import child_file

logger = logging.getLogger("lgos_gateways.litellm_sync")

BASE_CONFIG = Path(__file__).resolve().parents[2] / "litellm" / "config.yaml"


def load_config(path: Path, base: Path, *, reseed: bool = False) -> dict[str, Any]:
    """The config to merge into: the served one, or the operator's base when there is none yet
    (or when ``reseed`` asks for the base as it is now)."""
    source = path if path.exists() and not reseed else base
    data = yaml.safe_load(source.read_text()) or {}
    if not isinstance(data, dict):
        raise CatalogError(f"{source} is not a LiteLLM config mapping")
    return data


def write_atomically(path: Path, config: dict[str, Any]) -> None:
    """Readers (a restarting proxy) see the old file or the new one, never half of one.

    Readable by all: under compose the proxy reading it is not the job writing it (root without
    CAP_DAC_OVERRIDE cannot read another user's 0600 file). It names its secrets only as
    ``os.environ/...`` references."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile("w", dir=path.parent, delete=False, suffix=".tmp") as out:
        yaml.safe_dump(config, out, sort_keys=False)
    os.chmod(out.name, 0o644)
    os.replace(out.name, path)


def served_catalog(gateway: httpx.Client) -> dict[str, Any]:
    """The managed entries the running proxy serves on ``/model/info``, by model name."""
    response = gateway.get("/model/info")
    response.raise_for_status()
    return {
        entry["model_name"]: entry["model_info"].get("lgos")
        for entry in response.json()["data"]
        if is_managed(entry)
    }


def wait_until_served(gateway: httpx.Client, graphs: list[Graph], timeout: float) -> None:
    expected = {graph.gateway_name: graph.lgos for graph in graphs}
    deadline = time.monotonic() + timeout
    while True:
        try:
            if served_catalog(gateway) == expected:
                return
        except httpx.HTTPError:
            pass  # restarting
        if time.monotonic() > deadline:
            raise CatalogError(f"the gateway did not serve the new catalog within {timeout:.0f}s")
        time.sleep(0.5)


def reload_proxy(pid_file: Path, timeout: float) -> None:
    """SIGHUP the supervisor and wait until it runs a new proxy process, so the served catalog
    is checked against the restarted proxy, never the old one still answering."""
    try:
        pid = int(pid_file.read_text().strip())
        before = child_file(pid_file).read_text()
        os.kill(pid, signal.SIGHUP)
    except (FileNotFoundError, ProcessLookupError, ValueError) as exc:
        raise CatalogError(f"the gateway supervisor is not running ({pid_file})") from exc
    logger.info("asked the LiteLLM supervisor to restart", extra={"pid": pid})
    deadline = time.monotonic() + timeout
    while True:
        try:
            if child_file(pid_file).read_text() != before:
                return
        except FileNotFoundError as exc:
            raise CatalogError("the gateway supervisor stopped during the restart") from exc
        if time.monotonic() > deadline:
            raise CatalogError(f"the gateway did not restart within {timeout:.0f}s")
        time.sleep(0.1)


def sync(args: argparse.Namespace) -> int:
    with lgos_client(args.lgos_url) as lgos:
        graphs = fetch_catalog(lgos)
    urls = [url.strip() for url in (args.upstream_url or "").split(",") if url.strip()]
    upstream = Upstream(api_bases=tuple(urls or [f"{args.lgos_url}/v1"]), api_key=args.upstream_key)
    base = load_config(args.config, args.base, reseed=args.reseed)
    config, report = merge_catalog(base, graphs, upstream)
    if report.changed or args.reseed or not args.config.exists():
        write_atomically(args.config, config)
    logger.info(
        "litellm catalog synced",
        extra={
            "config": str(args.config),
            "added": report.added,
            "updated": report.updated,
            "removed": report.removed,
            "unchanged": len(report.unchanged),
        },
    )
    if report.changed and args.reload_pid_file is not None:
        reload_proxy(args.reload_pid_file, args.timeout)
    if args.gateway_url:
        key = os.environ.get("OPENAI_GATEWAY_API_KEY", "")
        headers = {"Authorization": f"Bearer {key}"}
        with httpx.Client(base_url=args.gateway_url, headers=headers, timeout=10.0) as gateway:
            wait_until_served(gateway, graphs, args.timeout)
        logger.info("gateway serves the catalog", extra={"gateway": args.gateway_url})
    return 0


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    env = os.environ.get
    parser.add_argument("--lgos-url", default=env("LGOS_URL", "http://127.0.0.1:3004"))
    parser.add_argument(
        "--upstream-url",
        default=env("LGOS_UPSTREAM_URL"),
        help="LGOS /v1 base URL as the proxy reaches it (default: --lgos-url + /v1); several, "
        "comma-separated, for several instances serving the same registry: one deployment "
        "each under the graph's model name",
    )
    parser.add_argument(
        "--upstream-key",
        default=env("LGOS_UPSTREAM_KEY", "lgos-does-not-check-keys"),
        help="the api_key LiteLLM sends to LGOS (an os.environ/NAME reference works)",
    )
    parser.add_argument("--config", type=Path, required=True, help="the config the proxy serves")
    parser.add_argument("--base", type=Path, default=BASE_CONFIG, help="used when --config is new")
    parser.add_argument(
        "--reseed",
        action="store_true",
        help="start from --base even if --config exists (start-up jobs: operator edits apply)",
    )
    parser.add_argument("--reload-pid-file", type=Path, help="lgos-litellm-serve's pid file")
    parser.add_argument("--gateway-url", help="verify the running proxy serves the catalog")
    parser.add_argument("--timeout", type=float, default=60.0)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    configure_logging(os.environ.get("LGOS_LOG_LEVEL", "info"))
    try:
        sys.exit(sync(parse_args(argv)))
    except (CatalogError, httpx.HTTPError) as exc:
        logger.error("litellm catalog sync failed", extra={"error": str(exc)})
        sys.exit(1)


if __name__ == "__main__":
    main()
