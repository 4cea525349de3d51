"""The demo stack as ``docker-compose`` runs it on this checkout's engine, from local bases.

compose.yaml (rendered for Compose v1: ``lgos_stack.containers.compose_v1``) with
compose.local.yaml on top, a copy of .env.example with test secrets, its profiles. Every call is
``docker-compose -p <project> --project-directory <repository> --env-file <env> -f ... -f ...``.
"""

from __future__ import annotations

import json
import secrets
import socket
import subprocess
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lgos_stack.containers import compose_v1
from lgos_stack.containers.engine import DOCKER_CLI, Engine, docker
from lgos_stack.paths import ROOT

COMPOSE_CLI = "/usr/bin/docker-compose"
PROJECT = "lgos-demo"
SECRETS = (
    "LGOS_API_KEY",
    "OPENAI_GATEWAY_API_KEY",
    "CHAINLIT_PASSWORD",
    "CHAINLIT_AUTH_SECRET",
    "WEBUI_ADMIN_PASSWORD",
    "WEBUI_SECRET_KEY",
    "BIFROST_ADMIN_PASSWORD",
    "BIFROST_ENCRYPTION_KEY",
    "POSTGRES_PASSWORD",
    "SEARXNG_SECRET",
    "FILES_API_KEYS",
)
""".env.example's secrets, each given a fresh test value (Files' key list: one key)."""


def filled_env(target: Path, settings: Mapping[str, str] | None = None) -> dict[str, str]:
    """.env.example copied to ``target`` with every secret set to a fresh value and ``settings``
    (variables .env.example names) set as given; the values."""
    values = {name: f"sk-test-{secrets.token_hex(12)}" for name in SECRETS}
    values.update(settings or {})
    values["FILES_API_KEY"] = values["FILES_API_KEYS"]
    values["DEMO_API_FILES_API_KEY"] = values["FILES_API_KEYS"]
    lines = []
    for line in (ROOT / ".env.example").read_text().splitlines():
        name = line.split("=", 1)[0]
        lines.append(f"{name}={values[name]}" if "=" in line and name in values else line)
    target.write_text("\n".join(lines) + "\n")
    return {**compose_v1.env_file(target), **values}


def busy_ports(ports: Iterable[int]) -> list[int]:
    """The ``ports`` on 127.0.0.1 that something already listens on."""
    busy = []
    for port in ports:
        with socket.socket() as probe:
            probe.settimeout(0.5)
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                busy.append(port)
    return busy


@dataclass
class Compose:
    engine: Engine
    env_file: Path
    rendered: Path
    profiles: tuple[str, ...]
    log: Path

    @classmethod
    def prepare(
        cls,
        engine: Engine,
        folder: Path,
        profiles: tuple[str, ...],
        settings: Mapping[str, str] | None = None,
    ) -> tuple[Compose, dict[str, str]]:
        env_file = folder / "stack.env"
        values = filled_env(env_file, settings)
        rendered = compose_v1.write(
            ROOT / "compose.yaml", folder / "compose.v1.yaml", values, set(profiles)
        )
        return cls(engine, env_file, rendered, profiles, folder / "compose.log"), values

    def command(self, *args: str) -> list[str]:
        return [
            COMPOSE_CLI,
            "--project-name",
            PROJECT,
            "--project-directory",
            str(ROOT),
            "--env-file",
            str(self.env_file),
            *(option for profile in self.profiles for option in ("--profile", profile)),
            "--file",
            str(self.rendered),
            "--file",
            str(ROOT / "compose.local.yaml"),
            *args,
        ]

    def run(self, *args: str, timeout: float = 1800, check: bool = True) -> str:
        """``docker-compose ARGS``; its output is appended to the log and returned."""
        result = subprocess.run(
            self.command(*args),
            env={**self.engine.env(), "COMPOSE_HTTP_TIMEOUT": "300"},
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        with self.log.open("a") as log:
            log.write(f"$ docker-compose {' '.join(args)}\n{result.stdout}{result.stderr}\n")
        if check and result.returncode != 0:
            tail = (result.stdout + result.stderr).strip().splitlines()[-40:]
            raise AssertionError(f"docker-compose {' '.join(args)} failed:\n" + "\n".join(tail))
        return result.stdout

    def containers(self) -> dict[str, str]:
        """Each service's container (the first replica's), by service name."""
        found: dict[str, str] = {}
        listed = docker(
            self.engine,
            "ps",
            "--all",
            "--filter",
            f"label=com.docker.compose.project={PROJECT}",
            "--format",
            '{{.Names}} {{.Label "com.docker.compose.service"}}',
        ).stdout
        for line in sorted(listed.splitlines()):
            name, service = line.split()
            found.setdefault(service, name)
        return found

    def replicas(self, service: str) -> list[str]:
        """The running containers of ``service``, by name."""
        listed = docker(
            self.engine,
            "ps",
            "--filter",
            f"label=com.docker.compose.project={PROJECT}",
            "--filter",
            f"label=com.docker.compose.service={service}",
            "--format",
            "{{.Names}}",
        ).stdout
        return sorted(listed.split())

    def host_port(self, container: str, port: int) -> int:
        """The loopback port ``container``'s ``port`` is published on."""
        published = docker(self.engine, "port", container, str(port)).stdout.split()[0]
        return int(published.rsplit(":", 1)[1])

    def set_env(self, variable: str, value: str) -> None:
        """``variable=value`` in the env file every later call reads."""
        lines = [
            line
            for line in self.env_file.read_text().splitlines()
            if line.split("=", 1)[0] != variable
        ]
        self.env_file.write_text("\n".join([*lines, f"{variable}={value}"]) + "\n")

    def inspect(self, container: str) -> dict[str, Any]:
        found: list[dict[str, Any]] = json.loads(docker(self.engine, "inspect", container).stdout)
        return found[0]

    def wait_healthy(self, container: str, timeout: float = 300) -> None:
        deadline = time.monotonic() + timeout
        while True:
            state = self.inspect(container)["State"]
            if state.get("Health", {}).get("Status") == "healthy":
                return
            if time.monotonic() > deadline:
                logs = docker(self.engine, "logs", "--tail", "40", container, check=False)
                raise AssertionError(
                    f"{container} not healthy: {state}\n{logs.stdout}{logs.stderr}"
                )
            time.sleep(1.0)

    def logs(self, folder: Path) -> None:
        """Every container's log into ``folder`` (kept after the run for reading)."""
        folder.mkdir(parents=True, exist_ok=True)
        for service, container in self.containers().items():
            result = docker(self.engine, "logs", container, check=False)
            (folder / f"{service}.log").write_text(result.stdout + result.stderr)

    def memory(self) -> dict[str, str]:
        """Each running container's memory use, from one ``docker stats`` sample."""
        result = subprocess.run(
            [DOCKER_CLI, "stats", "--no-stream", "--format", "{{.Name}} {{.MemUsage}}"],
            env=self.engine.env(),
            capture_output=True,
            text=True,
            timeout=120,
        )
        return dict(line.split(" ", 1) for line in result.stdout.splitlines() if " " in line)
