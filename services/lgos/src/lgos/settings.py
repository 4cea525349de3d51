"""Server settings, read from ``LGOS_*`` environment variables."""

from __future__ import annotations

from pathlib import Path
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
    state_dir: Path = Field(
        default=Path(".lgos"), description="Embedded SQLite checkpoints when no Postgres is set."
    )
    lease_ttl: float = Field(default=30.0, gt=0, description="Run lease expiry (renewed in use).")
    interrupt_ttl: float = Field(
        default=7 * 24 * 3600.0, gt=0, description="Paused runs older than this are swept."
    )
    sweep_interval: float = Field(
        default=3600.0, ge=0, description="Seconds between expiry sweeps in `lgos serve`; 0: off."
    )
