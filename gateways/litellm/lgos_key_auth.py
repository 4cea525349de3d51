"""LiteLLM auth hook (``general_settings.custom_auth``): the gateway key, with proper 401s.

Without a database LiteLLM answers a missing key with 500 and a wrong key with 400.
This hook accepts only the gateway key (Bearer or ``x-litellm-api-key``) and answers anything
else with 401. It runs inside LiteLLM's own venv (.tools/litellm), not the workspace.

The key is ``OPENAI_GATEWAY_API_KEY``, or, when ``OPENAI_GATEWAY_API_KEYS_FILE`` names a file,
each line of that file (blank lines and ``#`` comments skipped). The file is read again whenever
it changes, so a key is added or dropped without restarting the gateway; while it cannot be
read, no key is accepted.
"""

from __future__ import annotations

import os
import secrets

from fastapi import HTTPException, Request
from litellm.proxy._types import LitellmUserRoles, UserAPIKeyAuth

# Read once: the proxy's environment is fixed for its lifetime.
EXPECTED = os.environ.get("OPENAI_GATEWAY_API_KEY", "").encode()
KEYS_FILE = os.environ.get("OPENAI_GATEWAY_API_KEYS_FILE", "")

_read: tuple[tuple[int, int, int], tuple[bytes, ...]] | None = None


def _keys_in_file() -> tuple[bytes, ...]:
    global _read
    try:
        status = os.stat(KEYS_FILE)
        version = (status.st_ino, status.st_mtime_ns, status.st_size)
        if _read is None or _read[0] != version:
            with open(KEYS_FILE, "rb") as file:
                lines = (line.strip() for line in file)
                _read = (version, tuple(k for k in lines if k and not k.startswith(b"#")))
    except OSError:
        _read = None
        return ()
    return _read[1]


def accepted_keys() -> tuple[bytes, ...]:
    if KEYS_FILE:
        return _keys_in_file()
    return (EXPECTED,) if EXPECTED else ()


async def user_api_key_auth(request: Request, api_key: str) -> UserAPIKeyAuth:
    if not api_key:
        raise HTTPException(status_code=401, detail="Missing API key.")
    given = api_key.encode()
    # Compared with every key, so the time taken tells nothing about which one matched.
    matches = [secrets.compare_digest(given, key) for key in accepted_keys()]
    if not any(matches):
        raise HTTPException(status_code=401, detail="Invalid API key.")
    return UserAPIKeyAuth(api_key="gateway-master-key", user_role=LitellmUserRoles.PROXY_ADMIN)
