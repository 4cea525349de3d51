"""Run leases: at most one invocation per interrupt run at a time, with fencing tokens.

A lease expires unless renewed, so a crashed holder never leaves a run stuck; its fencing token
increases with every grant, so a paused holder whose lease lapsed cannot overwrite the state of a
newer holder (``FencedSaver`` checks the token before every checkpoint write).
"""

from __future__ import annotations

import asyncio
import itertools
import time
from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True, slots=True)
class Lease:
    key: str
    token: int


class RunCoordinator(Protocol):
    async def acquire(self, key: str) -> Lease | None:
        """Grant the lease, or ``None`` when another holder has it (callers answer 409)."""
        ...

    async def holds(self, lease: Lease) -> bool:
        """Whether ``lease`` is still the current grant (renewing it when it is)."""
        ...

    async def release(self, lease: Lease) -> None: ...

    async def close(self) -> None: ...


class InProcessCoordinator:
    """The embedded default: leases in this process's memory (one LGOS process only)."""

    def __init__(self, ttl: float = 30.0) -> None:
        self.ttl = ttl
        self._leases: dict[str, tuple[int, float]] = {}
        self._tokens = itertools.count(1)
        self._lock = asyncio.Lock()

    async def acquire(self, key: str) -> Lease | None:
        async with self._lock:
            current = self._leases.get(key)
            if current is not None and current[1] > time.monotonic():
                return None
            token = next(self._tokens)
            self._leases[key] = (token, time.monotonic() + self.ttl)
            return Lease(key, token)

    async def holds(self, lease: Lease) -> bool:
        async with self._lock:
            current = self._leases.get(lease.key)
            if current is None or current[0] != lease.token or current[1] <= time.monotonic():
                return False
            self._leases[lease.key] = (lease.token, time.monotonic() + self.ttl)
            return True

    async def release(self, lease: Lease) -> None:
        async with self._lock:
            current = self._leases.get(lease.key)
            if current is not None and current[0] == lease.token:
                del self._leases[lease.key]

    async def close(self) -> None:
        self._leases.clear()
