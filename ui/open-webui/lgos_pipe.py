"""
title: LGOS
description: LangGraph graphs served by LGOS, through the stack's gateway (Responses API).
version: 0.2.0
license: MIT
"""

# An Open WebUI Function (a manifold Pipe), installed and kept up to date by install_pipe.py.
# Open WebUI wants one file: this one holds its valves and entry points; the turn and everything
# Open-WebUI-specific that is plain logic (chat store, history matching, the ask-user card) live
# in lgos_ui, which is installed into Open WebUI's venv.
#
# Logs: our loggers (lgos_pipe, lgos_ui) write service_kit's JSON lines on stderr, each turn's
# with the request id its gateway calls send; Open WebUI's own logging is left as it is.

from __future__ import annotations

import logging
import os
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, Literal

from lgos_ui.catalog import GRAPH_PREFIX, CatalogCache, GraphEntry, entry_from_extension
from lgos_ui.mcp import GatewayMCP
from lgos_ui.open_webui import ChatStore, Emitter, OpenWebUITools, Reply
from lgos_ui.turn import REQUEST_ID_HEADER
from openai import AsyncOpenAI
from pydantic import BaseModel, Field
from service_kit.context import new_request_id
from service_kit.logs import configure_logging

CATALOG_TTL = 10.0
LOGGERS = ("lgos_pipe", "lgos_ui")
LOG_LEVEL = "info"

log = logging.getLogger("lgos_pipe")


def configure_logs() -> None:
    """Our loggers only, as JSON lines on stderr (Open WebUI's handlers never see them)."""
    for name in LOGGERS:
        # Inside Open WebUI's process: its httpx/httpcore log levels are its own to set.
        configure_logging(LOG_LEVEL, name, quiet_urls=False)


class Pipe:
    class Valves(BaseModel):
        GATEWAY_URL: str = Field(
            default="http://127.0.0.1:3000/v1", description="The gateway's OpenAI base URL."
        )
        GATEWAY_TYPE: Literal["litellm", "bifrost"] = Field(
            default="litellm", description="Which native catalog lists the graphs."
        )
        GATEWAY_API_KEY: str = Field(default="", description="The gateway key (server-side only).")
        MCP_GRAPHS: str = Field(
            default="",
            description="Extra graphs (comma-separated) offered the gateway's MCP tools.",
        )
        POLL_INTERVAL: float = Field(default=0.5, description="Seconds between background polls.")
        STATE_DIR: str = Field(
            default="", description="Where chat state is kept (default: DATA_DIR/lgos-chats)."
        )

    def __init__(self) -> None:
        self.type = "manifold"
        self.valves = self.Valves()
        self._catalog = CatalogCache(CATALOG_TTL)
        configure_logs()

    async def catalog(self) -> list[GraphEntry]:
        valves = self.valves
        return await self._catalog.get(
            valves.GATEWAY_URL, valves.GATEWAY_API_KEY, valves.GATEWAY_TYPE
        )

    async def pipes(self) -> list[dict[str, str]]:
        return [{"id": entry.graph, "name": entry.graph} for entry in await self.catalog()]

    async def entry(self, model_id: str) -> GraphEntry:
        graph = model_id.split(".", 1)[1] if "." in model_id else model_id
        for entry in await self.catalog():
            if entry.graph == graph:
                return entry
        return entry_from_extension(f"{GRAPH_PREFIX}{graph}", None)

    def store(self) -> ChatStore:
        root = self.valves.STATE_DIR or os.path.join(os.environ.get("DATA_DIR", "."), "lgos-chats")
        return ChatStore(Path(root))

    def openai(self, request_id: str) -> AsyncOpenAI:
        """One request's gateway client: each call sends the request's ``X-Request-Id``."""
        return AsyncOpenAI(
            base_url=self.valves.GATEWAY_URL,
            api_key=self.valves.GATEWAY_API_KEY or "missing",
            # A float, not an httpx.Timeout: Open WebUI's openai and ours bundle different httpx.
            timeout=600.0,
            max_retries=1,
            default_headers={REQUEST_ID_HEADER: request_id},
        )

    async def pipe(
        self,
        body: dict[str, Any],
        __event_emitter__: Emitter | None = None,
        __chat_id__: str | None = None,
        __files__: list[dict[str, Any]] | None = None,
        __metadata__: dict[str, Any] | None = None,
        __tools__: dict[str, Any] | None = None,
        __task__: str | None = None,
    ) -> AsyncIterator[str | dict[str, Any]] | str:
        if __task__:
            # Title/tag/follow-up generation must never cost a graph run.
            return ""
        metadata = __metadata__ or {}
        model_id = str(body.get("model", ""))
        valves = self.valves
        gateway = GatewayMCP(valves.GATEWAY_URL, valves.GATEWAY_API_KEY)
        entry = await self.entry(model_id)
        request_id = new_request_id()
        log.info("turn", extra={"request_id": request_id, "model": entry.model})
        reply = Reply(
            entry=entry,
            chat_id=str(__chat_id__ or metadata.get("chat_id") or f"local-{uuid.uuid4().hex}"),
            model_id=model_id,
            emit=__event_emitter__ or _no_emit,
            client=self.openai(request_id),
            store=self.store(),
            chat_variables=metadata.get("chat_variables"),
            tools=OpenWebUITools(__tools__ or {}, gateway),
            mcp_graphs=tuple(g.strip() for g in valves.MCP_GRAPHS.split(",") if g.strip()),
            poll_interval=valves.POLL_INTERVAL,
            request_id=request_id,
        )
        return reply.respond(list(body.get("messages") or []), __files__ or [])


async def _no_emit(event: dict[str, Any]) -> None:
    return None
