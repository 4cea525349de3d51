"""offline-model settings (``OFFLINE_MODEL_*``)."""

from __future__ import annotations

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class OfflineModelSettings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="OFFLINE_MODEL_", extra="ignore", env_ignore_empty=True
    )

    host: str = "127.0.0.1"
    port: int = Field(default=3007, ge=1, le=65535)
    max_request_bytes: int = Field(
        default=8 * 1024 * 1024,
        gt=0,
        description="Request bodies over this many bytes are refused with 413 while reading.",
    )
    token_delay: float = Field(
        default=0.0, ge=0, description="Seconds between streamed tokens, to make streaming visible."
    )
