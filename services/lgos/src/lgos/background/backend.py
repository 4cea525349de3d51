"""What a background engine provides: submit, snapshot, cancel, idempotent creation."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal, Protocol

BackgroundStatus = Literal[
    "queued", "in_progress", "completed", "incomplete", "failed", "cancelled"
]
"""The public states; the last four are terminal and never change again."""

TERMINAL: frozenset[str] = frozenset({"completed", "incomplete", "failed", "cancelled"})

Snapshot = dict[str, Any]
"""A Response object as JSON, exactly what ``GET /v1/responses/{id}`` returns."""

JobBody = Callable[[Callable[[Snapshot], None]], Awaitable[Snapshot]]
"""Runs one Response: receives a callback to publish the in-progress snapshot, returns the final."""


@dataclass(frozen=True, slots=True)
class IdempotencyKey:
    """A client's ``Idempotency-Key``, scoped like runs, with the hash of the request it named."""

    scope: str
    key: str
    request_hash: str


class IdempotencyKeyReusedError(Exception):
    """The key already names a different request."""


class BackgroundBackend(Protocol):
    async def submit(
        self, queued: Snapshot, scope: str, body: JobBody, idempotency: IdempotencyKey | None
    ) -> Snapshot:
        """Store the queued Response and schedule its job, or return the Response an
        idempotency key already created (raising ``IdempotencyKeyReusedError`` on a mismatch)."""
        ...

    async def retrieve(self, response_id: str, scope: str) -> Snapshot | None: ...

    async def cancel(self, response_id: str, scope: str) -> Snapshot | None:
        """Cancel a queued or running Response; a terminal one comes back unchanged."""
        ...

    async def close(self) -> None: ...
