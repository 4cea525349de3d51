"""Setting types the services share: bind address, log level, body limit, PostgreSQL pool.

Each service's settings class declares these fields with its own prefix and default, e.g.
``port: Port = 3004``; the bounds and descriptions live here once.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

Port = Annotated[int, Field(ge=1, le=65535)]

LogLevel = Literal["debug", "info", "warning", "error"]

MaxRequestBytes = Annotated[
    int,
    Field(
        gt=0, description="Request bodies over this many bytes are refused with 413 while reading."
    ),
]

PostgresConnectTimeout = Annotated[
    int, Field(ge=2, le=60, description="Seconds to open one PostgreSQL connection.")
]

PostgresPoolTimeout = Annotated[
    float,
    Field(
        gt=0,
        le=300,
        description="Seconds a request waits for a pooled PostgreSQL connection; while "
        "PostgreSQL is down, requests that need it fail (503) after this.",
    ),
]

PostgresReconnectTimeout = Annotated[
    float,
    Field(
        gt=0,
        le=300,
        description="Seconds a pool keeps retrying (with backoff) to replace a lost connection "
        "before leaving it to the next request, which then reconnects at once.",
    ),
]
