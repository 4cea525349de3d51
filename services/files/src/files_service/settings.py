"""Files service settings, read from ``FILES_*`` environment variables."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal, Self

from pydantic import Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict
from service_kit.settings import (
    LogLevel,
    Port,
    PostgresConnectTimeout,
    PostgresPoolTimeout,
    PostgresReconnectTimeout,
)


class FilesSettings(BaseSettings):
    """How one Files service process stores bytes, metadata and search chunks."""

    model_config = SettingsConfigDict(env_prefix="FILES_", extra="ignore", env_ignore_empty=True)

    host: str = "127.0.0.1"
    port: Port = 3006
    log_level: LogLevel = "info"
    metrics_enabled: bool = Field(
        default=True,
        description="Prometheus metrics, recorded and served on /metrics; false: nothing is "
        "recorded and /metrics answers 404 in the OpenAI error envelope.",
    )
    api_keys: Annotated[list[SecretStr], NoDecode] = Field(
        default_factory=list,
        description="Comma-separated bearer keys; empty accepts every request (local use only).",
    )
    postgres_uri: str = Field(
        default="postgresql://postgres@127.0.0.1:3001/postgres",
        description="Metadata and search chunks.",
    )
    postgres_connect_timeout: PostgresConnectTimeout = 5
    postgres_pool_timeout: PostgresPoolTimeout = 5.0
    postgres_reconnect_timeout: PostgresReconnectTimeout = 5.0

    storage: Literal["disk", "s3"] = "disk"
    storage_dir: Path = Field(default=Path(".files"), description="Bytes, with storage=disk.")
    s3_endpoint: str | None = Field(default=None, description="host:port of S3/MinIO.")
    s3_access_key: SecretStr | None = None
    s3_secret_key: SecretStr | None = None
    s3_bucket: str = "lgos-files"
    s3_secure: bool = False
    s3_region: str | None = None

    max_upload_bytes: int = Field(default=512 * 1024 * 1024, gt=0)

    embeddings_url: str | None = Field(
        default=None,
        description="OpenAI-compatible base URL (…/v1) for semantic ranking; unset: full text.",
    )
    embeddings_model: str = "all-MiniLM-L6-v2"
    embeddings_api_key: SecretStr | None = None
    embeddings_timeout: float = Field(default=30.0, gt=0)
    embeddings_batch_size: int = Field(default=64, ge=1, le=2048)

    indexing_timeout: float = Field(
        default=120.0, gt=0, description="Seconds before an attached file is marked failed."
    )
    indexing_concurrency: int = Field(default=2, ge=1)
    max_index_bytes: int = Field(default=32 * 1024 * 1024, gt=0)
    sweep_interval: float = Field(
        default=300.0, ge=0, description="Seconds between expired-file and orphan sweeps; 0: off."
    )
    orphan_grace: float = Field(
        default=3600.0,
        gt=0,
        description="Stored bytes with no file row (a process killed between storing and "
        "recording them) and unfinished writes untouched this many seconds are removed by the "
        "sweep; longer than any upload still in progress may take.",
    )

    @field_validator("api_keys", mode="before")
    @classmethod
    def split_keys(cls, value: object) -> object:
        if isinstance(value, str):
            return [key.strip() for key in value.split(",") if key.strip()]
        return value

    @model_validator(mode="after")
    def s3_needs_credentials(self) -> Self:
        if self.storage == "s3":
            missing = [
                f"FILES_{name.upper()}"
                for name in ("s3_endpoint", "s3_access_key", "s3_secret_key")
                if getattr(self, name) is None
            ]
            if missing:
                raise ValueError(f"storage=s3 needs {', '.join(missing)}")
        return self
