"""The local Docker engine: ``python scripts/containers.py up|images|down|status|env``.

up       install docker.io, docker-compose and debootstrap when missing (apt, as root), start
         dockerd under .dev/docker/, build the local base images (once; kept after)
images   build the images compose.yaml builds, against the local Python base, and the local
         stand-ins for its public images (Redis, PostgreSQL, LiteLLM, Node.js, Open WebUI)
down     stop this checkout's dockerd (its containers stop with it)
status   whether the engine runs, and which local images exist
env      the line that points a shell's docker and docker-compose at the engine:
         eval "$(python scripts/containers.py env)"
"""

from __future__ import annotations

import argparse
import sys

from lgos_stack.containers import bases, engine, images


def say(line: str) -> None:
    print(line, flush=True)


def warn(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def up(local: engine.Engine) -> None:
    engine.install_packages(say)
    engine.start(local, say)
    bases.ensure(local, say)
    say(f"ready: export DOCKER_HOST={local.host}")


def status(local: engine.Engine) -> int:
    if not local.answers():
        say(f"stopped (DOCKER_HOST={local.host})")
        return 1
    say(f"running: pid {local.pid()}, DOCKER_HOST={local.host}")
    for name in (bases.DEBIAN_IMAGE, bases.PYTHON_IMAGE):
        say(f"{name}: {'built' if bases.image_exists(local, name) else 'missing'}")
    return 0


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("command", choices=["up", "images", "down", "status", "env"])
    args = parser.parse_args(argv)
    local = engine.Engine.of_checkout()
    try:
        if args.command == "up":
            up(local)
        elif args.command == "images":
            up(local)
            images.build_all(local, say)
            for service in bases.STANDINS:
                bases.standin(local, say, service)
            images.build_all(local, say, tuple(images.ON_STANDIN))
        elif args.command == "down":
            if not engine.stop(local, say):
                say("dockerd was not running")
        elif args.command == "env":
            say(f"export DOCKER_HOST={local.host} DOCKER_BUILDKIT=1 COMPOSE_DOCKER_CLI_BUILD=1")
        else:
            sys.exit(status(local))
    except engine.EngineError as error:
        warn(str(error))
        sys.exit(1)
