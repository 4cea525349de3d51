"""``lgos serve [MODULE:FACTORY ...]`` serves registries (default: ``LGOS_REGISTRY``);
``lgos worker [MODULE:FACTORY ...]`` runs their background jobs (distributed engine); with
``--reload`` either restarts on a change of the served code, and ``serve --workers N``
serves from N processes; ``lgos sweep`` deletes expired
interrupt runs; ``lgos new NAME`` generates a project serving one graph of your own."""

from __future__ import annotations

import argparse
import asyncio
import functools
import logging
import os
import sys
from collections.abc import Callable, Sequence
from contextlib import AsyncExitStack
from datetime import timedelta
from pathlib import Path
from typing import Any, NoReturn, TypeVar

from pydantic import ValidationError
from service_kit import metrics
from service_kit.langfuse import LangfuseSettingsError
from service_kit.logs import configure_logging
from service_kit.reload import supervise, without_reload
from service_kit.serve import add_bind_options, add_reload_option, bind_overrides, serve
from service_kit.tracing import configure_tracing

from lgos.app import build_runners, create_app
from lgos.background.worker import Worker
from lgos.config import GraphRegistry
from lgos.gc_tuning import tune_collector
from lgos.interrupts.persistence import open_saver
from lgos.interrupts.sweep import delete_expired_interrupt_runs
from lgos.loader import (
    AppDirs,
    TargetError,
    load_registries,
    parse_targets,
    served,
    source_folders,
)
from lgos.protocol.responses.background import execute_job
from lgos.scaffold import ScaffoldError, create_project, next_steps
from lgos.settings import LGOSSettings
from lgos.state import AppState
from lgos.storage import PostgresLimits
from lgos.workers import WorkersError, check_background, check_reload, serve_workers

T = TypeVar("T")

GRACEFUL_SHUTDOWN = 5
"""Seconds `lgos serve` lets in-flight requests finish when it stops (or reloads)."""


def registry_or_exit(settings: LGOSSettings) -> GraphRegistry:
    """The merged registry ``settings`` name, or one line on stderr and exit status 2."""
    return _targets_or_exit(settings, load_registries)


def reload_or_exit(settings: LGOSSettings, argv: Sequence[str], grace: float) -> NoReturn:
    """Run this command again, without reloading, as a child restarted on each change of the
    targets' code (see ``service_kit.reload``); exits with the last child's status."""
    folders = _targets_or_exit(settings, source_folders)
    command = [sys.executable, "-m", "lgos", *without_reload(argv)]
    env = {**os.environ, "LGOS_RELOAD": "false"}
    raise SystemExit(supervise(command, folders, env=env, grace=grace))


def _targets_or_exit(settings: LGOSSettings, use: Callable[[Sequence[str], AppDirs], T]) -> T:
    """``use`` applied to what ``settings`` serve: the LGOS_REGISTRY targets from the app directory,
    then a project's own (a target named by both is served once)."""
    try:
        targets, folders = served(settings.registry, settings.app_dir, settings.project)
        if not targets:
            sys.stderr.write(
                "lgos: nothing to serve: name MODULE:FACTORY or set LGOS_REGISTRY or LGOS_PROJECT\n"
            )
            raise SystemExit(2)
        return use(targets, folders)
    except TargetError as error:
        sys.stderr.write(f"lgos: {error}\n")
        raise SystemExit(2) from None


async def sweep_once(settings: LGOSSettings, ttl: timedelta) -> list[str]:
    async with AsyncExitStack() as stack:
        saver = await open_saver(
            stack, settings.postgres_uri, settings.state_dir, PostgresLimits.from_settings(settings)
        )
        return await delete_expired_interrupt_runs(saver, ttl)


async def run_worker(
    registry: GraphRegistry, settings: LGOSSettings, health_port: int | None
) -> None:
    metrics.set_enabled(settings.metrics_enabled)
    state = AppState(registry=registry, runners=build_runners(registry), settings=settings)
    await state.open()
    tune_collector(settings.gc_thresholds)
    try:
        worker = Worker(settings, functools.partial(execute_job, state))
        worker.install_signal_handlers()
        await worker.run(health_port)
    finally:
        await state.aclose()
        metrics.mark_process_dead()


def settings_from_env(**overrides: object) -> LGOSSettings:
    try:
        return LGOSSettings(**overrides)  # type: ignore[arg-type]
    except ValidationError as error:
        problems = "; ".join(_problem(e["loc"], e["msg"]) for e in error.errors())
        raise SystemExit(f"lgos: invalid settings: {problems}") from None


def _problem(location: tuple[int | str, ...], message: str) -> str:
    """One settings error, named by its variable unless the message already names it."""
    message = message.removeprefix("Value error, ")
    if not location or message.startswith("LGOS_"):
        return message
    return f"LGOS_{str(location[0]).upper()}: {message}"


def tracing_or_exit(service: str) -> None:
    """Traces exported as the environment says (OTLP, Langfuse); invalid ``LANGFUSE_*`` stop
    the command before it serves anything."""
    try:
        configure_tracing(service, langfuse=True)
    except LangfuseSettingsError as error:
        raise SystemExit(f"lgos: invalid settings: {error}") from None


def workers_or_exit(check: Callable[[], None]) -> None:
    try:
        check()
    except WorkersError as error:
        sys.stderr.write(f"lgos: {error}\n")
        raise SystemExit(2) from None


def add_target_options(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "targets",
        nargs="*",
        metavar="MODULE:FACTORY",
        help="a GraphRegistry or a factory of one; several (or a comma list) are merged "
        "(default: LGOS_REGISTRY)",
    )
    command.add_argument(
        "--app-dir",
        type=Path,
        help="import the targets from this folder (LGOS_APP_DIR; default: the current directory)",
    )
    command.add_argument(
        "--project",
        type=Path,
        help="also serve the registry this project's pyproject.toml names under [tool.lgos] "
        "(LGOS_PROJECT)",
    )
    add_reload_option(command, env_prefix="LGOS_")


def target_overrides(parser: argparse.ArgumentParser, args: argparse.Namespace) -> dict[str, Any]:
    """The targets and app directory given on the command line, as settings overrides."""
    overrides: dict[str, Any] = {}
    if args.targets:
        try:
            overrides["registry"] = parse_targets(args.targets)
        except ValueError as error:
            parser.error(str(error))  # exits 2 with the usage line
    if args.app_dir is not None:
        overrides["app_dir"] = args.app_dir
    if args.project is not None:
        overrides["project"] = args.project
    if args.reload:
        overrides["reload"] = True
    return overrides


def new_project(args: argparse.Namespace) -> None:
    """Generate the project ``lgos new`` names; an unusable name or folder is one line, exit 2."""
    destination = args.dir if args.dir is not None else Path(args.name)
    try:
        project = create_project(args.name, destination)
    except ScaffoldError as error:
        sys.stderr.write(f"lgos: {error}\n")
        raise SystemExit(2) from None
    sys.stdout.write(next_steps(args.name, project))


def main(argv: Sequence[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(prog="lgos", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    serve_command = commands.add_parser("serve", help="serve a graph registry over the OpenAI API")
    add_target_options(serve_command)
    add_bind_options(serve_command, env_prefix="LGOS_", port=3004)
    serve_command.add_argument(
        "--workers",
        type=int,
        help="processes serving the port (LGOS_WORKERS, default 1); above 1 they share "
        "PostgreSQL and Redis",
    )
    sweep = commands.add_parser(
        "sweep", help="delete paused interrupt runs older than the TTL, then exit"
    )
    sweep.add_argument(
        "--ttl", type=float, help="seconds (LGOS_INTERRUPT_TTL, default 7 days); 0 sweeps all"
    )
    worker = commands.add_parser(
        "worker", help="run background jobs from the queue (LGOS_BACKGROUND=distributed)"
    )
    add_target_options(worker)
    worker.add_argument(
        "--host", help="bind address of the health and metrics port (LGOS_HOST, default 127.0.0.1)"
    )
    worker.add_argument("--port", type=int, help="serve GET /health and GET /metrics on this port")
    worker.add_argument(
        "--concurrency", type=int, help="jobs run at once (LGOS_WORKER_CONCURRENCY, default 8)"
    )
    new = commands.add_parser("new", help="generate a project serving one graph of your own")
    new.add_argument("name", metavar="NAME", help="the project and model name, e.g. my-graph")
    new.add_argument("--dir", type=Path, help="the folder to create (default: ./NAME)")
    args = parser.parse_args(argv)
    if args.command == "new":
        new_project(args)
        return
    if args.command == "worker":
        extra: dict[str, Any] = {"worker_concurrency": args.concurrency} if args.concurrency else {}
        if args.host is not None:
            extra["host"] = args.host
        extra.update(target_overrides(commands.choices[args.command], args))
        settings = settings_from_env(background="distributed", **extra)
        configure_logging(settings.log_level)
        tracing_or_exit("lgos-worker")
        if settings.reload:
            reload_or_exit(settings, argv, grace=settings.worker_shutdown_grace + 10)
        asyncio.run(run_worker(registry_or_exit(settings), settings, args.port))
        return
    if args.command == "sweep":
        settings = settings_from_env()
        configure_logging(settings.log_level)
        ttl = settings.interrupt_ttl if args.ttl is None else args.ttl
        swept = asyncio.run(sweep_once(settings, timedelta(seconds=ttl)))
        sys.stdout.write(f"swept {len(swept)} expired interrupt run(s)\n")
        return

    overrides = target_overrides(commands.choices[args.command], args)
    if args.workers is not None:
        overrides["workers"] = args.workers
    settings = settings_from_env(**bind_overrides(args), **overrides)
    configure_logging(settings.log_level)
    workers_or_exit(functools.partial(check_reload, settings))
    tracing_or_exit("lgos")
    if settings.reload:
        reload_or_exit(settings, argv, grace=GRACEFUL_SHUTDOWN + 5)
    registry = registry_or_exit(settings)
    if settings.workers > 1:
        workers_or_exit(functools.partial(check_background, settings, registry))
        serve_workers(settings, grace=GRACEFUL_SHUTDOWN)
        return
    app = create_app(registry, settings)
    tune_collector(settings.gc_thresholds)
    logging.getLogger("lgos").info(
        "serving", extra={"models": list(app.state.lgos.registry), "port": settings.port}
    )
    serve(
        app,
        host=settings.host,
        port=settings.port,
        log_level=settings.log_level,
        timeout_graceful_shutdown=GRACEFUL_SHUTDOWN,
    )


if __name__ == "__main__":  # pragma: no cover
    main()
