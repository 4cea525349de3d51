"""The chat model demo graphs call: ``offline-model`` unless a real provider key is set."""

from __future__ import annotations

from typing import Any

import openai
from langchain_openai import ChatOpenAI
from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict
from service_kit.context import inject_httpx

OFFLINE_MODEL = "offline-model"


class DemoAPISettings(BaseSettings):
    """``DEMO_API_*``: which model the demo graphs use."""

    model_config = SettingsConfigDict(env_prefix="DEMO_API_", extra="ignore", env_ignore_empty=True)

    openai_api_key: SecretStr | None = None
    openai_base_url: str | None = None
    openai_model: str | None = None
    offline_model_url: str = "http://127.0.0.1:3007/v1"
    model_timeout: float = Field(
        default=120.0,
        gt=0,
        description=(
            "Seconds the model may stay silent (connecting, before its answer starts, or "
            "between two streamed chunks) before the call fails: a stalled upstream ends the "
            "run with response.failed, keeping what was streamed, instead of a hang."
        ),
    )

    @property
    def offline(self) -> bool:
        return self.openai_api_key is None


def chat_model(settings: DemoAPISettings | None = None, **kwargs: Any) -> ChatOpenAI:
    """A streaming-capable ChatOpenAI that reports usage through any base URL."""
    settings = settings or DemoAPISettings()
    if settings.offline:
        base_url: str | None = settings.offline_model_url
        api_key = SecretStr("offline-model-needs-no-key")
        model = OFFLINE_MODEL
    else:
        base_url = settings.openai_base_url
        api_key = settings.openai_api_key  # type: ignore[assignment]
        model = settings.openai_model or "gpt-4.1-mini"
    # stream_usage: ChatOpenAI only asks for streamed usage on OpenAI's default URL by itself.
    kwargs.setdefault("timeout", settings.model_timeout)
    # langchain-openai's own per-chunk timer wraps every streamed chunk in asyncio.wait_for: a
    # task and a timer per token, ~95 us of CPU each here (docs/project/reliability.md, scale),
    # 37 % of a streamed token's cost. The HTTP read timeout above already bounds a silent
    # upstream; a reasoning model's keep-alive comments reset it, as they should for a long think.
    kwargs.setdefault("stream_chunk_timeout", None)
    # Each call carries the serving request's X-Request-Id and trace context to the model.
    kwargs.setdefault("http_async_client", traced_async_client())
    return ChatOpenAI(
        model=model, base_url=base_url, api_key=api_key, stream_usage=True, max_retries=1, **kwargs
    )


def traced_async_client() -> openai.DefaultAsyncHttpxClient:
    """The OpenAI SDK's own httpx client (its pool limits and redirects), whose calls carry the
    serving request's ``X-Request-Id`` and trace context."""
    return openai.DefaultAsyncHttpxClient(event_hooks={"request": [inject_httpx]})
