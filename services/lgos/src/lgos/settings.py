"""Server settings, read from ``LGOS_*`` environment variables."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

import orjson
from pydantic import Field, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict
from service_kit.settings import (
    MaxRequestBytes,
    PostgresConnectTimeout,
    PostgresPoolTimeout,
    PostgresReconnectTimeout,
)

from lgos.loader import parse_targets

BackgroundEngine = Literal["inprocess", "distributed"]
"""``inprocess``: jobs run inside ``lgos serve`` (embedded default, nothing survives a restart).
``distributed``: records in PostgreSQL, dispatch and cancel signals on Redis, ``lgos worker``
processes run the jobs."""


class LGOSSettings(BaseSettings):
    """How one LGOS process serves its registry."""

    model_config = SettingsConfigDict(
        env_prefix="LGOS_", extra="ignore", env_ignore_empty=True, use_attribute_docstrings=True
    )

    registry: Annotated[tuple[str, ...], NoDecode] = ()
    """What `lgos serve` and `lgos worker` serve when no target is given: MODULE:ATTR entries,
    comma-separated, each a GraphRegistry or a zero-argument factory of one, merged in order.
    Unset, a target on the command line is required."""

    app_dir: Path | None = None
    """The folder the registry modules are imported from; unset: the current directory."""

    project: Path | None = None
    """A project folder (what `lgos new` generates) whose pyproject.toml names what it serves
    under [tool.lgos] (registry, app-dir): served after the LGOS_REGISTRY entries."""

    reload: bool = False
    """`lgos serve` and `lgos worker` restart when a *.py file changes in the folders the
    registry modules come from (for authors; a paused review survives with PostgreSQL)."""

    workers: int = Field(default=1, ge=1, le=64)
    """`lgos serve` processes sharing the port, each with its own event loop (and its own
    PostgreSQL pools); above 1 they need LGOS_POSTGRES_URI and LGOS_REDIS_URL, which hold what
    one process's request leaves for the next."""

    host: str = "127.0.0.1"
    port: int = Field(default=3004, ge=1, le=65535)
    log_level: Literal["debug", "info", "warning", "error"] = "info"

    metrics_enabled: bool = True
    """Prometheus metrics: recorded and served on `/metrics` (also the worker's health port).
    'false': nothing is recorded and `/metrics` answers 404 in the OpenAI error envelope, so a
    scrape shows the target down rather than up with no series."""

    sse_ping_interval: float = Field(default=15.0, gt=0)
    """Seconds of graph silence before a ': ping' comment."""

    loop_lag_interval: float = Field(default=0.0, ge=0)
    """Seconds between event-loop lag probes (an 'event loop lag' log line per report window); 0
    (the default): no probe."""

    loop_lag_report_every: float = Field(default=2.0, gt=0)
    """Seconds of lag samples each 'event loop lag' line sums up."""

    gc_thresholds: Annotated[tuple[int, int, int] | None, NoDecode] = (700, 10, 1_000)
    """CPython's collector thresholds (young allocations, then counts of the two older generations),
    set once the app is built ('700,10,10' are CPython's own); 'default' leaves them alone."""

    api_keys: Annotated[dict[str, str], NoDecode] = Field(default_factory=dict, repr=False)
    """API key -> scope name ('key=scope,key2=scope2' or a JSON object); empty (the default): no
    authentication."""

    trusted_scope_header: str | None = None
    """A header a trusted gateway sets to the caller's tenant; read only when named here (with API
    keys it subdivides the key's scope)."""

    max_request_bytes: MaxRequestBytes = 8 * 1024 * 1024

    max_input_items: int = Field(default=4096, gt=0)
    """Most Responses input items or Chat messages a request has."""

    max_tools: int = Field(default=128, gt=0)
    """Most tools one request declares."""

    max_tool_schema_bytes: int = Field(default=64 * 1024, gt=0)
    """Largest one tool declaration may be, as JSON."""

    max_json_depth: int = Field(default=64, gt=1)
    """Deepest nesting of objects and arrays a body may have."""

    postgres_uri: str | None = None
    """Shared checkpoint/run state; embedded defaults when unset."""

    redis_url: str | None = None
    """Shared leases and queue; in-process when unset."""

    postgres_connect_timeout: PostgresConnectTimeout = 5
    postgres_pool_timeout: PostgresPoolTimeout = 5.0
    postgres_reconnect_timeout: PostgresReconnectTimeout = 5.0

    postgres_pool_size: int = Field(default=10, ge=1, le=1000)
    """Most connections in each PostgreSQL pool."""

    redis_timeout: float = Field(default=5.0, gt=1.0, le=60)  # above the worker's 1 s blocking read
    """Seconds to connect to Redis or to wait for its reply; while Redis is down, lease and dispatch
    calls fail (503) after this instead of hanging."""

    state_dir: Path = Path(".lgos")
    """Embedded SQLite checkpoints when no Postgres is set."""

    lease_ttl: float = Field(default=30.0, gt=0)
    """Run lease expiry (renewed in use)."""

    interrupt_ttl: float = Field(default=7 * 24 * 3600.0, gt=0)
    """Paused runs older than this are swept."""

    sweep_interval: float = Field(default=3600.0, ge=0)
    """Seconds between expiry sweeps in `lgos serve`; 0: off."""

    background: BackgroundEngine = "inprocess"
    """Where background jobs run (see BackgroundEngine)."""

    background_queue: str = Field(default="lgos:background", min_length=1)
    """Redis stream (and cancel-channel prefix) the distributed engine uses."""

    idempotency_ttl: float = Field(default=24 * 3600.0, gt=0)
    """Seconds an Idempotency-Key names its Response."""

    background_retention: float = Field(default=7 * 24 * 3600.0, gt=0)
    """Finished background Responses kept this long."""

    worker_concurrency: int = Field(default=8, ge=1)
    """Jobs one worker runs at once."""

    worker_heartbeat: float = Field(default=2.0, gt=0)
    """Seconds between a worker's heartbeats per running job."""

    worker_stale_after: float = Field(default=10.0, gt=0)
    """A running job whose heartbeat is older than this failed with its worker."""

    worker_shutdown_grace: float = Field(default=10.0, ge=0)
    """Seconds a stopping worker lets in-flight jobs finish."""

    worker_consumer_idle: float = Field(default=3600.0, gt=0)
    """A queue consumer (one per worker process ever started) idle this long with nothing pending is
    removed from the Redis group by the workers' sweep."""

    background_sweep_interval: float = Field(default=2.0, gt=0)
    """Seconds between a worker's stale-job and requeue sweeps."""

    background_requeue_after: float = Field(default=60.0, gt=0)
    """A queued job not claimed for this long is dispatched again (lost message)."""

    @field_validator("registry", mode="before")
    @classmethod
    def _parse_registry(cls, value: Any) -> Any:
        if not isinstance(value, str | list | tuple):
            return value
        if not value:  # unset: the command line must name a target
            return ()
        try:
            return parse_targets(value)
        except ValueError as error:
            raise ValueError(f"LGOS_REGISTRY: {error}") from None

    @field_validator("gc_thresholds", mode="before")
    @classmethod
    def _parse_gc_thresholds(cls, value: Any) -> Any:
        if not isinstance(value, str):
            return value
        if value.strip() == "default":
            return None
        return tuple(part.strip() for part in value.split(","))

    @field_validator("gc_thresholds")
    @classmethod
    def _check_gc_thresholds(
        cls, value: tuple[int, int, int] | None
    ) -> tuple[int, int, int] | None:
        if value is None:
            return value
        young, middle, old = value
        # 0 would switch the collector off; past these bounds a collection is a long pause.
        if not (100 <= young <= 1_000_000 and 1 <= middle <= 10_000 and 1 <= old <= 100_000):
            raise ValueError(
                "LGOS_GC_THRESHOLDS needs 100-1000000 young allocations, then two counts "
                "of 1-10000 and 1-100000"
            )
        return value

    @field_validator("api_keys", mode="before")
    @classmethod
    def _parse_api_keys(cls, value: Any) -> Any:
        if not isinstance(value, str):
            return value
        if value.lstrip().startswith("{"):
            return orjson.loads(value)
        pairs = [pair.partition("=") for pair in value.split(",") if pair.strip()]
        if any(not sep for _, sep, _ in pairs):
            raise ValueError("LGOS_API_KEYS entries are key=scope")
        return {key.strip(): scope.strip() for key, _, scope in pairs}

    @field_validator("api_keys")
    @classmethod
    def _check_api_keys(cls, value: dict[str, str]) -> dict[str, str]:
        if any(not key or not scope for key, scope in value.items()):
            raise ValueError("LGOS_API_KEYS needs a non-empty key and scope in every entry")
        return value

    @model_validator(mode="after")
    def _check_background(self) -> LGOSSettings:
        if self.background == "distributed" and not (self.postgres_uri and self.redis_url):
            raise ValueError(
                "LGOS_BACKGROUND=distributed needs LGOS_POSTGRES_URI and LGOS_REDIS_URL"
            )
        if self.workers > 1 and not (self.postgres_uri and self.redis_url):
            raise ValueError(
                "LGOS_WORKERS above 1 needs LGOS_POSTGRES_URI and LGOS_REDIS_URL "
                "(the processes share no memory)"
            )
        if self.worker_stale_after <= 2 * self.worker_heartbeat:
            raise ValueError("LGOS_WORKER_STALE_AFTER must exceed two heartbeats")
        return self
