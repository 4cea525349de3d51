"""How every LGOS Redis client connects: bounded waits, one retry past a dropped connection."""

from __future__ import annotations

from typing import Any

from redis.asyncio import Redis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import ConnectionError as RedisConnectionError


def redis_options(timeout: float) -> dict[str, Any]:
    """Client options: an unreachable Redis fails the call after ``timeout`` (it never hangs),
    and a dropped connection is retried once at once, on a new connection: that is what the
    first command on a pooled connection a Redis restart or a network reset closed meets. Under
    uvloop, writing to a transport the peer reset raises a bare ``RuntimeError`` ("the handler
    is closed") rather than a ``ConnectionError``, so that one is retried too. (A retried lease
    grant that had in fact succeeded finds its own lease and answers busy: safe.)"""
    return {
        "socket_timeout": timeout,
        "socket_connect_timeout": timeout,
        "retry": Retry(NoBackoff(), 1),
        "retry_on_error": [RedisConnectionError, RuntimeError],
    }


def connect_redis(url: str, timeout: float) -> Redis:
    return Redis.from_url(url, **redis_options(timeout))
