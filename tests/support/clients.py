"""The one way tests build the official SDK: strict response validation, no retries."""

from __future__ import annotations

import httpx
from openai import AsyncOpenAI


def sdk_client(
    base_url: str, http_client: httpx.AsyncClient | None = None, *, api_key: str = "not-checked"
) -> AsyncOpenAI:
    return AsyncOpenAI(
        base_url=base_url,
        api_key=api_key,
        http_client=http_client,
        max_retries=0,
        _strict_response_validation=True,
    )
