"""The gateway as this app sees it: one OpenAI client, one HTTP client, a cached catalog."""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field

import httpx
from lgos_ui import CatalogError, GraphEntry, fetch_catalog
from openai import AsyncOpenAI

from lgos_chainlit.config import AppSettings

log = logging.getLogger("lgos_chainlit")


@dataclass
class Gateway:
    settings: AppSettings
    http: httpx.AsyncClient = field(
        default_factory=lambda: httpx.AsyncClient(timeout=httpx.Timeout(30.0, connect=5.0))
    )
    _catalog: list[GraphEntry] = field(default_factory=list)
    _fetched: float = 0.0
    _error: str | None = None
    _lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    def __post_init__(self) -> None:
        self.openai = AsyncOpenAI(
            base_url=self.settings.gateway_url,
            api_key=self.settings.gateway_key,
            timeout=httpx.Timeout(600.0, connect=10.0),
            max_retries=1,
        )

    async def catalog(self) -> list[GraphEntry]:
        """The graphs, re-read after ``catalog_ttl`` seconds; the last good list on failure."""
        async with self._lock:
            if time.monotonic() - self._fetched < self.settings.catalog_ttl and self._fetched:
                return self._catalog
            try:
                self._catalog = await fetch_catalog(
                    self.http,
                    self.settings.gateway_url,
                    self.settings.gateway_key,
                    self.settings.gateway_type,
                )
                self._error = None
                self._fetched = time.monotonic()
            except CatalogError as exc:
                log.warning("catalog read failed: %s", exc)
                self._error = str(exc)
            return self._catalog

    @property
    def catalog_error(self) -> str | None:
        return self._error

    async def entry(self, graph: str | None) -> GraphEntry | None:
        entries = await self.catalog()
        if graph is None:
            return entries[0] if entries else None
        return next((e for e in entries if e.graph == graph), None)
