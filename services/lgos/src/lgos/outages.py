"""Telling a dependency outage (PostgreSQL or Redis unreachable) from a bug.

An outage answers 503 ``service_unavailable`` (retryable, logged as a warning without a stack);
anything else stays a 500 whose details go to the log only.
"""

from __future__ import annotations

import psycopg
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

_OUTAGES = (
    psycopg.OperationalError,  # includes psycopg_pool.PoolTimeout: no connection in time
    RedisConnectionError,
    RedisTimeoutError,
)


def is_outage(exc: BaseException) -> bool:
    """Whether ``exc`` (or what it was raised from) is a lost PostgreSQL or Redis."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, _OUTAGES):
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return False
