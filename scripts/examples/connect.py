"""The client the examples use: make dev's LGOS (port 3004, its local key), or wherever
OPENAI_BASE_URL and OPENAI_API_KEY point (a gateway, another LGOS)."""

from __future__ import annotations

import os

from openai import OpenAI


def lgos_client() -> OpenAI:
    return OpenAI(
        base_url=os.environ.get("OPENAI_BASE_URL", "http://127.0.0.1:3004/v1"),
        api_key=os.environ.get("OPENAI_API_KEY", "sk-lgos-local-only"),  # make dev's LGOS key
    )
