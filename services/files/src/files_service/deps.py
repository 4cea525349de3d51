"""Typed FastAPI dependencies: the service state, its parts, and bearer-key auth.

All async: they only read app state, and FastAPI would run a plain function in a worker thread
on every request.
"""

from __future__ import annotations

import hmac
from typing import Annotated

from fastapi import Depends, Request

from files_service.db import Pool
from files_service.errors import AuthenticationError
from files_service.state import FilesState
from files_service.storage import Storage


async def get_state(request: Request) -> FilesState:
    state: FilesState = request.app.state.files
    return state


StateDep = Annotated[FilesState, Depends(get_state)]


async def get_pool(state: StateDep) -> Pool:
    return state.pool


async def get_storage(state: StateDep) -> Storage:
    return state.storage


PoolDep = Annotated[Pool, Depends(get_pool)]
StorageDep = Annotated[Storage, Depends(get_storage)]


async def require_key(request: Request, state: StateDep) -> None:
    keys = state.settings.api_keys
    if not keys:
        return
    header = request.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise AuthenticationError(
            "You didn't provide an API key. Send it as 'Authorization: Bearer <key>'."
        )
    presented = token.strip().encode()
    # Compare against every key in constant time so timing reveals nothing about which matched.
    matched = False
    for key in keys:
        matched |= hmac.compare_digest(presented, key.get_secret_value().encode())
    if not matched:
        raise AuthenticationError("Incorrect API key provided.", code="invalid_api_key")
