"""Server settings, read from ``LGOS_*`` environment variables."""

from __future__ import annotations

from typing import Literal

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class LGOSSettings(BaseSettings):
    """How one LGOS process serves its registry."""

    model_config = SettingsConfigDict(env_prefix="LGOS_", extra="ignore", env_ignore_empty=True)

    host: str = "127.0.0.1"
    port: int = Field(default=3004, ge=1, le=65535)
    log_level: Literal["debug", "info", "warning", "error"] = "info"
    sse_ping_interval: float = Field(
        default=15.0, gt=0, description="Seconds of graph silence before a ': ping' comment."
    )
    postgres_uri: str | None = Field(
        default=None, description="Shared checkpoint/run state; embedded defaults when unset."
    )
    redis_url: str | None = Field(
        default=None, description="Shared leases and queue; in-process when unset."
    )
