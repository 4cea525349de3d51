"""Optional API-key authentication, and the server-trusted scope it yields.

Off unless ``LGOS_API_KEYS`` maps keys to scope names. Then every ``/v1`` route needs
``Authorization: Bearer <key>`` (else an OpenAI-shaped 401) and the key's scope isolates
interrupt runs, background Responses and idempotency keys. A gateway-set header
(``LGOS_TRUSTED_SCOPE_HEADER``) is read only when an operator names it; the scope never comes
from metadata, ``user`` or ``safety_identifier``.
"""

from __future__ import annotations

import hmac

from starlette.requests import Request
from starlette.types import ASGIApp, Receive, Scope, Send

from lgos.errors import AuthenticationError
from lgos.protocol.json import JSONResponse
from lgos.scope import ScopeResolver
from lgos.settings import LGOSSettings

STATE_KEY = "lgos_scope"
_MISSING = AuthenticationError(
    "You didn't provide an API key. Send it in the Authorization header as 'Bearer <key>'."
)
_WRONG = AuthenticationError("Incorrect API key provided.", code="invalid_api_key")


def key_scope(keys: dict[str, str], header: str | None) -> str | None:
    """The scope of the bearer key in ``header``; every key is compared in constant time."""
    scheme, _, presented = (header or "").partition(" ")
    if scheme.lower() != "bearer" or not presented.strip():
        return None
    candidate = presented.strip().encode()
    found = None
    for key, scope in keys.items():
        if hmac.compare_digest(candidate, key.encode()):
            found = scope
    return found


class APIKeyAuth:
    """ASGI middleware: 401 for ``/v1`` requests without a known key; else records its scope."""

    def __init__(self, app: ASGIApp, keys: dict[str, str]) -> None:
        self.app = app
        self.keys = keys

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not scope["path"].startswith("/v1/"):
            await self.app(scope, receive, send)
            return
        header = Request(scope).headers.get("authorization")
        found = key_scope(self.keys, header)
        if found is None:
            error = _MISSING if not header else _WRONG
            response = JSONResponse(
                error.to_envelope(),
                status_code=error.status_code,
                headers={"WWW-Authenticate": "Bearer"},
            )
            await response(scope, receive, send)
            return
        scope.setdefault("state", {})[STATE_KEY] = found
        await self.app(scope, receive, send)


def trusted_resolver(settings: LGOSSettings, fallback: ScopeResolver) -> ScopeResolver:
    """The scope of each request: its key's (when keys are on), refined by the trusted
    header (when one is named); ``fallback`` only when neither is configured."""
    header = settings.trusted_scope_header
    keyed = bool(settings.api_keys)
    if not keyed and header is None:
        return fallback

    def resolve(request: Request) -> str:
        base = request.scope["state"][STATE_KEY] if keyed else None
        tenant = request.headers.get(header) if header else None
        if tenant:
            return f"{base}/{tenant}" if base else f"header/{tenant}"
        return base if base is not None else fallback(request)

    return resolve
