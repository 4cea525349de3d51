"""Checkpoint thread keys: fixed length, derived from a trusted scope, the model and the run."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from uuid import UUID

from starlette.requests import Request

SHARED_SCOPE = "shared"
"""The default scope: one trust domain for every caller. Right for a single-tenant deployment
only; multi-tenant servers must resolve the scope from authenticated state."""

ScopeResolver = Callable[[Request], str]
"""Maps a request to its server-trusted scope (never caller-controlled metadata or ``user``)."""


def shared_scope(request: Request) -> str:
    return SHARED_SCOPE


def thread_key(scope: str, model: str, run_id: UUID) -> str:
    digest = hashlib.sha256(f"{len(scope)}:{scope}|{len(model)}:{model}|{run_id.hex}".encode())
    return f"lgos-run-{digest.hexdigest()}"
