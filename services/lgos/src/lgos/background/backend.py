"""What a background engine provides: submit, snapshot, cancel, idempotent creation."""

from __future__ import annotations

import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field, fields
from typing import Any, Literal, Protocol

from lgos.errors import INTERNAL_ERROR_MESSAGE

BackgroundStatus = Literal[
    "queued", "in_progress", "completed", "incomplete", "failed", "cancelled"
]
"""The public states; the last four are terminal and never change again."""

TERMINAL: frozenset[str] = frozenset({"completed", "incomplete", "failed", "cancelled"})

Snapshot = dict[str, Any]
"""A Response object as JSON, exactly what ``GET /v1/responses/{id}`` returns."""

Publish = Callable[[Snapshot], None]
"""Hands the engine the latest in-progress snapshot of a running job."""


@dataclass(frozen=True, slots=True)
class BackgroundJob:
    """Everything a worker needs to run one Response, in any process: plain JSON fields only.

    The request body is kept as the client sent it; a worker in another process decodes it
    again, so the job runs exactly what was validated at submission.
    """

    response_id: str
    scope: str
    model: str
    body: dict[str, Any]
    created_at: int
    run_id: str | None = None
    """Interrupt runs only: the run id chosen at submission (a resume's is its paused run's)."""
    request_id: str | None = None
    """The submitting request's id, so the job's log lines and calls carry it too."""
    traceparent: str | None = None
    """The submitting request's W3C trace context: the job's run span joins its trace."""
    decoded: Any = field(default=None, compare=False, repr=False)
    """The request as decoded at submission, for a job run by the process that accepted it;
    never stored."""

    def to_json(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name != "decoded"}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> BackgroundJob:
        # Fields a newer version stored and this one does not know are left out.
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})


JobExecutor = Callable[[BackgroundJob, Publish], Coroutine[Any, Any, Snapshot]]
"""Runs one job: publishes in-progress snapshots, returns the terminal one."""


@dataclass(frozen=True, slots=True)
class IdempotencyKey:
    """A client's ``Idempotency-Key``, scoped like runs, with the hash of the request it named."""

    scope: str
    key: str
    request_hash: str


class IdempotencyKeyReusedError(Exception):
    """The key already names a different request."""


def failed_snapshot(snapshot: Snapshot, message: str = INTERNAL_ERROR_MESSAGE) -> Snapshot:
    """``snapshot`` (keeping its partial output) turned into a failed Response."""
    return {
        **snapshot,
        "status": "failed",
        "completed_at": int(time.time()),
        "error": {"code": "server_error", "message": message},
    }


class BackgroundBackend(Protocol):
    async def submit(
        self, queued: Snapshot, job: BackgroundJob, idempotency: IdempotencyKey | None
    ) -> Snapshot:
        """Store the queued Response and schedule its job, or return the Response an
        idempotency key already created (raising ``IdempotencyKeyReusedError`` on a mismatch)."""
        ...

    async def retrieve(self, response_id: str, scope: str) -> Snapshot | None: ...

    async def cancel(self, response_id: str, scope: str) -> Snapshot | None:
        """Cancel a queued or running Response; a terminal one comes back unchanged."""
        ...

    async def close(self) -> None: ...
