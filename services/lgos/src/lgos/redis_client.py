"""How every LGOS Redis client connects: bounded waits, one retry past a dropped connection."""

from __future__ import annotations

from typing import Any

from redis.asyncio import Redis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import ConnectionError as RedisConnectionError


def redis_options(timeout: float) -> dict[str, Any]:
    """Client options: an unreachable Redis fails the call after ``timeout`` (it never hangs),
    and a connection error is retried once at once, on a new connection: it is what a pooled
    connection that a Redis restart closed raises first. (A retried lease grant that had in fact
    succeeded finds its own lease and answers busy: safe.)"""
    return {
        "socket_timeout": timeout,
        "socket_connect_timeout": timeout,
        "retry": Retry(NoBackoff(), 1),
        "retry_on_error": [RedisConnectionError],
    }


def connect_redis(url: str, timeout: float) -> Redis:
    return Redis.from_url(url, **redis_options(timeout))
