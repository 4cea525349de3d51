"""Containers on this checkout's own Docker engine (``lgos_stack.containers``), for the tests.

The engine is installed and started when missing and stopped after the session if the session
started it; a developer's running engine (``make docker-up``) is used and left running. Every
container and network a test starts carries the session's prefix and is removed after it.
"""

from __future__ import annotations

import json
import logging
import os
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from lgos_stack.containers import bases, engine
from lgos_stack.containers.engine import Engine, docker
from lgos_stack.containers.images import run_options

log = logging.getLogger(__name__)
ENGINE_WAIT = float(os.environ.get("LGOS_DOCKER_ENGINE_WAIT", "1200"))
"""How long a session waits for another checkout's engine to stop (one engine per machine)."""


def local_engine() -> Iterator[Engine]:
    """Installed, started and with its base images; stopped after when this started it."""
    local = Engine.of_checkout()
    engine.install_packages(log.info)
    started = engine.start(local, log.info, wait=ENGINE_WAIT)
    try:
        bases.ensure(local, log.info)
        yield local
    finally:
        if started:
            engine.stop(local, log.info)


@dataclass
class Containers:
    """What one test session starts on the engine: named ``<prefix>-<name>``, removed after."""

    engine: Engine
    prefix: str = field(default_factory=lambda: f"lgos-test-{uuid.uuid4().hex[:8]}")
    started: list[str] = field(default_factory=list)
    networks: list[str] = field(default_factory=list)
    volumes: list[str] = field(default_factory=list)

    def network(self) -> str:
        name = f"{self.prefix}-net"
        if name not in self.networks:
            docker(self.engine, "network", "create", name)
            self.networks.append(name)
        return name

    def volume(self, name: str) -> str:
        full = f"{self.prefix}-{name}"
        self.volumes.append(full)
        return full

    def run(
        self,
        service: str,
        image: str,
        *,
        env: dict[str, str] | None = None,
        publish: int | None = None,
        network: str | None = None,
        alias: str | None = None,
        mounts: list[str] | None = None,
        command: list[str] | None = None,
        detach: bool = True,
    ) -> str:
        """``docker run`` hardened as compose.yaml hardens ``service``; the container's name
        (detached) or its output (``detach=False``, removed after it exits)."""
        name = f"{self.prefix}-{service}-{uuid.uuid4().hex[:4]}"
        args = ["run", "--name", name, *run_options(service)]
        args += ["--detach"] if detach else ["--rm"]
        for key, value in (env or {}).items():
            args += ["--env", f"{key}={value}"]
        if publish is not None:
            args += ["--publish", f"127.0.0.1::{publish}"]
        if network is not None:
            args += ["--network", network]
        if alias is not None:
            args += ["--network-alias", alias]
        for mount in mounts or []:
            args += ["--volume", mount]
        result = docker(self.engine, *args, image, *(command or []))
        if not detach:
            return result.stdout
        self.started.append(name)
        return name

    def inspect(self, name: str) -> dict[str, Any]:
        found: list[dict[str, Any]] = json.loads(docker(self.engine, "inspect", name).stdout)
        return found[0]

    def host_port(self, name: str, port: int) -> int:
        published = docker(self.engine, "port", name, f"{port}/tcp").stdout.split()[0]
        return int(published.rsplit(":", 1)[1])

    def wait_healthy(self, name: str, timeout: float = 120.0) -> None:
        """Until the image's HEALTHCHECK reports healthy; the container's log when it fails."""
        deadline = time.monotonic() + timeout
        while True:
            state = self.inspect(name)["State"]
            health = state.get("Health", {}).get("Status")
            if health == "healthy":
                return
            if not state["Running"] or health == "unhealthy" or time.monotonic() > deadline:
                logs = docker(self.engine, "logs", "--tail", "40", name, check=False)
                raise AssertionError(
                    f"{name}: {state['Status']}, health {health}\n{logs.stdout}{logs.stderr}"
                )
            time.sleep(1.0)

    def exec(self, name: str, *command: str) -> tuple[int, str]:
        result = docker(self.engine, "exec", name, *command, check=False)
        return result.returncode, result.stdout + result.stderr

    def remove(self, name: str) -> None:
        docker(self.engine, "rm", "--force", "--volumes", name, check=False)
        self.started.remove(name)

    def remove_all(self) -> None:
        if self.started:
            docker(self.engine, "rm", "--force", "--volumes", *self.started, check=False)
        for network in self.networks:
            docker(self.engine, "network", "rm", network, check=False)
        if self.volumes:
            docker(self.engine, "volume", "rm", "--force", *self.volumes, check=False)
