"""What the runner starts (a ``Component``) and what its setup steps share (the ``Stack``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from lgos_stack.ports import Ports

HEALTH_TIMEOUT = 60.0


@dataclass
class Stack:
    """What setup steps share: the ports, and environment they hand to later components."""

    ports: Ports
    env: dict[str, str] = field(default_factory=dict)
    """Set by a setup step (e.g. an id a one-shot job created); every later component gets it."""


Setup = Callable[["Component", Stack], None]


@dataclass(frozen=True, kw_only=True)
class Component:
    name: str
    port: int
    args: list[str]
    env: dict[str, str] = field(default_factory=dict)
    health_path: str = "/health"
    tcp_health: bool = False
    """Health is an accepted TCP connection (databases), not an HTTP 200."""
    service_user: bool = False
    """Run as the unprivileged service user when started as root (PostgreSQL refuses root)."""
    requires: tuple[Path, ...] = ()
    """Installed files the component needs; `make dev` installs them."""
    setup: Setup | None = None
    """Runs before the process starts, after every earlier component is healthy."""
    ready: Setup | None = None
    """Runs once the process is healthy (a job that needs the component's own API)."""
    health_timeout: float = HEALTH_TIMEOUT

    @property
    def health_url(self) -> str:
        if self.tcp_health:
            return f"tcp://127.0.0.1:{self.port}"
        return f"http://127.0.0.1:{self.port}{self.health_path}"
