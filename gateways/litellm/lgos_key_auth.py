"""LiteLLM auth hook (``general_settings.custom_auth``): the gateway key, with proper 401s.

Without a database LiteLLM answers a missing key with 500 and a wrong key with 400.
This hook accepts only ``OPENAI_GATEWAY_API_KEY`` (Bearer or ``x-litellm-api-key``) and answers
anything else with 401. It runs inside LiteLLM's own venv (.tools/litellm), not the workspace.
"""

from __future__ import annotations

import os
import secrets

from fastapi import HTTPException, Request
from litellm.proxy._types import LitellmUserRoles, UserAPIKeyAuth

# Read once: the proxy's environment is fixed for its lifetime (a key change is a restart).
EXPECTED = os.environ.get("OPENAI_GATEWAY_API_KEY", "").encode()


async def user_api_key_auth(request: Request, api_key: str) -> UserAPIKeyAuth:
    if not api_key:
        raise HTTPException(status_code=401, detail="Missing API key.")
    if not EXPECTED or not secrets.compare_digest(api_key.encode(), EXPECTED):
        raise HTTPException(status_code=401, detail="Invalid API key.")
    return UserAPIKeyAuth(api_key="gateway-master-key", user_role=LitellmUserRoles.PROXY_ADMIN)
