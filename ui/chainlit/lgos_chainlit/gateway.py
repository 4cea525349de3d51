"""The gateway as this app sees it: one OpenAI client, one HTTP client, a cached catalog."""

from __future__ import annotations

from dataclasses import dataclass, field

import httpx
from lgos_ui import GraphEntry
from lgos_ui.catalog import CatalogCache
from lgos_ui.mcp import GatewayMCP
from openai import AsyncOpenAI

from lgos_chainlit.config import AppSettings


@dataclass
class Gateway:
    settings: AppSettings
    http: httpx.AsyncClient = field(
        default_factory=lambda: httpx.AsyncClient(timeout=httpx.Timeout(30.0, connect=5.0))
    )

    def __post_init__(self) -> None:
        self.openai = AsyncOpenAI(
            base_url=self.settings.gateway_url,
            api_key=self.settings.gateway_key,
            timeout=httpx.Timeout(600.0, connect=10.0),
            max_retries=1,
        )
        self.mcp = GatewayMCP(self.settings.gateway_url, self.settings.gateway_key, self.http)
        self._catalog = CatalogCache(self.settings.catalog_ttl)

    async def catalog(self) -> list[GraphEntry]:
        """The graphs, re-read after ``catalog_ttl`` seconds; the last good list on failure."""
        settings = self.settings
        return await self._catalog.get(
            settings.gateway_url, settings.gateway_key, settings.gateway_type, self.http
        )

    @property
    def catalog_error(self) -> str | None:
        return self._catalog.error

    async def entry(self, graph: str | None) -> GraphEntry | None:
        entries = await self.catalog()
        if graph is None:
            return entries[0] if entries else None
        return next((e for e in entries if e.graph == graph), None)
