"""offline-model settings (``OFFLINE_MODEL_*``)."""

from __future__ import annotations

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict
from service_kit.settings import LogLevel, MaxRequestBytes, Port


class OfflineModelSettings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="OFFLINE_MODEL_", extra="ignore", env_ignore_empty=True
    )

    host: str = "127.0.0.1"
    port: Port = 3007
    max_request_bytes: MaxRequestBytes = 8 * 1024 * 1024
    log_level: LogLevel = "info"
    echo: bool = Field(
        default=False,
        description=(
            "Debug: answer by quoting everything the model was sent (the latest message, every "
            "instruction, tool output and file id), for tests that must see what reached it."
        ),
    )
    token_delay: float = Field(
        default=0.0, ge=0, description="Seconds between streamed tokens, to make streaming visible."
    )
