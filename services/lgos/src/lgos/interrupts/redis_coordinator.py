"""Run leases on Redis, shared by every LGOS process of a deployment.

``lgos:lease:<key>`` holds the current fencing token with an expiry; ``lgos:fence:<key>`` is the
counter that issues tokens (kept a day after its last grant, far beyond any lease). Renewal and
release are compare-and-set scripts, so only the current holder can extend or drop a lease.

Redis may restart empty (no persistence): every lease is then gone, so each holder's next renewal
fails and it stops writing; a counter Redis lost starts again from the server clock (in µs), above
every token granted before, so no new grant can equal the token a stale holder still has.
"""

from __future__ import annotations

from redis.asyncio import Redis

from lgos.interrupts.coordinator import Lease
from lgos.redis_client import connect_redis

_ACQUIRE = """
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
if redis.call('EXISTS', KEYS[2]) == 0 then
  local now = redis.call('TIME')
  redis.call('SET', KEYS[2], now[1] .. string.format('%06d', tonumber(now[2])))
end
local token = redis.call('INCR', KEYS[2])
redis.call('PEXPIRE', KEYS[2], 86400000)
redis.call('SET', KEYS[1], token, 'PX', ARGV[1])
return token
"""
_RENEW = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
"""
_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""


class RedisCoordinator:
    def __init__(
        self, url: str, ttl: float = 30.0, prefix: str = "lgos", timeout: float = 5.0
    ) -> None:
        self.redis: Redis = connect_redis(url, timeout)
        self.ttl_ms = int(ttl * 1000)
        self.prefix = prefix
        self._acquire = self.redis.register_script(_ACQUIRE)
        self._renew = self.redis.register_script(_RENEW)
        self._release = self.redis.register_script(_RELEASE)

    def _keys(self, key: str) -> list[str]:
        return [f"{self.prefix}:lease:{key}", f"{self.prefix}:fence:{key}"]

    async def acquire(self, key: str) -> Lease | None:
        token = int(await self._acquire(keys=self._keys(key), args=[self.ttl_ms]))
        return Lease(key, token) if token else None

    async def holds(self, lease: Lease) -> bool:
        lease_key = self._keys(lease.key)[0]
        return bool(await self._renew(keys=[lease_key], args=[str(lease.token), self.ttl_ms]))

    async def release(self, lease: Lease) -> None:
        await self._release(keys=[self._keys(lease.key)[0]], args=[str(lease.token)])

    async def close(self) -> None:
        await self.redis.aclose()
