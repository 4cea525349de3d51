"""Request scopes: the server-trusted trust domain each interrupt run and background Response
belongs to.

A deployment passes its own ``ScopeResolver`` to ``create_app``; a run or background Response is
only visible to requests that resolve to the scope it was created in.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable

from starlette.requests import Request

SHARED_SCOPE = "shared"
"""The default scope: one trust domain for every caller. Right for a single-tenant deployment
only; multi-tenant servers must resolve the scope from authenticated state."""

ScopeResolver = Callable[[Request], str]
"""Maps a request to its server-trusted scope (never caller-controlled metadata or ``user``)."""


def shared_scope(request: Request) -> str:
    """The default ``ScopeResolver``: every request shares ``SHARED_SCOPE``."""
    return SHARED_SCOPE


def scope_hash(scope: str) -> str:
    """What logs and traces show of a scope: a short digest, never the scope itself."""
    return hashlib.sha256(scope.encode()).hexdigest()[:16]
