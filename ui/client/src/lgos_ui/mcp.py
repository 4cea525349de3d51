"""Calls to the gateway's MCP endpoint (streamable HTTP, JSON-RPC over POST), as functions.

The gateway decides which tools a key may see (``tools/list``) and call (``tools/call``); a UI
offers those as Responses function tools, runs the graph's calls here and answers with
``function_call_output``. Plain httpx, so it installs into any UI's environment without pinning
an ``mcp`` SDK version against the UI's own.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import httpx

from lgos_ui.catalog import gateway_root

PROTOCOL_VERSION = "2025-06-18"
MAX_OUTPUT_CHARS = 16_000


class MCPError(RuntimeError):
    """The MCP endpoint refused or failed a request."""


@dataclass(frozen=True, slots=True)
class MCPTool:
    name: str
    description: str
    input_schema: dict[str, Any]

    def as_function(self) -> dict[str, Any]:
        """The Responses function tool a graph sees (not strict: MCP schemas are open)."""
        return {
            "type": "function",
            "name": self.name,
            "description": self.description,
            "parameters": self.input_schema or {"type": "object", "properties": {}},
            "strict": False,
        }


class MCPClient:
    """One MCP session per instance; open it with ``async with``."""

    def __init__(self, http: httpx.AsyncClient, url: str, api_key: str) -> None:
        self.http = http
        self.url = url
        self.headers = {
            "Accept": "application/json, text/event-stream",
            "Content-Type": "application/json",
            "Authorization": f"Bearer {api_key}",
        }
        self.next_id = 0

    @classmethod
    def for_gateway(cls, http: httpx.AsyncClient, base_url: str, api_key: str) -> MCPClient:
        return cls(http, f"{gateway_root(base_url)}/mcp", api_key)

    async def __aenter__(self) -> MCPClient:
        await self.initialize()
        return self

    async def __aexit__(self, *exc: object) -> None:
        session = self.headers.get("mcp-session-id")
        if session:
            # The session expires on the server anyway.
            with contextlib.suppress(httpx.HTTPError):
                await self.http.delete(self.url, headers=self.headers)

    async def _post(self, payload: Mapping[str, Any]) -> httpx.Response:
        try:
            return await self.http.post(self.url, headers=self.headers, json=payload)
        except httpx.HTTPError as exc:
            raise MCPError(f"the MCP endpoint is unreachable: {exc.__class__.__name__}") from exc

    async def request(self, method: str, params: Mapping[str, Any] | None = None) -> dict[str, Any]:
        self.next_id += 1
        payload: dict[str, Any] = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            payload["params"] = dict(params)
        response = await self._post(payload)
        if response.status_code != 200:
            raise MCPError(f"{method}: the MCP endpoint answered {response.status_code}")
        if session := response.headers.get("mcp-session-id"):
            self.headers["mcp-session-id"] = session
        message = _message(response, self.next_id)
        if "error" in message:
            error = message["error"]
            text = error.get("message") if isinstance(error, Mapping) else error
            raise MCPError(f"{method}: {text}")
        result = message.get("result")
        return result if isinstance(result, dict) else {}

    async def initialize(self) -> None:
        await self.request(
            "initialize",
            {
                "protocolVersion": PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "lgos-ui", "version": "0.1.0"},
            },
        )
        response = await self._post({"jsonrpc": "2.0", "method": "notifications/initialized"})
        if response.status_code >= 400:
            raise MCPError(f"notifications/initialized: {response.status_code}")

    async def list_tools(self) -> list[MCPTool]:
        result = await self.request("tools/list")
        tools = []
        for tool in result.get("tools") or []:
            if isinstance(tool, Mapping) and isinstance(tool.get("name"), str):
                schema = tool.get("inputSchema") or tool.get("input_schema") or {}
                tools.append(
                    MCPTool(str(tool["name"]), str(tool.get("description") or ""), dict(schema))
                )
        return tools

    async def call_tool(self, name: str, arguments: Mapping[str, Any]) -> ToolResult:
        result = await self.request("tools/call", {"name": name, "arguments": dict(arguments)})
        return ToolResult.of(result)


@dataclass(frozen=True, slots=True)
class ToolResult:
    text: str
    is_error: bool

    @classmethod
    def of(cls, result: Mapping[str, Any]) -> ToolResult:
        texts = [
            str(part.get("text", ""))
            for part in result.get("content") or []
            if isinstance(part, Mapping) and part.get("type") == "text"
        ]
        if not texts and result.get("structuredContent") is not None:
            texts = [json.dumps(result["structuredContent"])]
        is_error = bool(result.get("isError") or result.get("is_error"))
        return cls("\n".join(texts)[:MAX_OUTPUT_CHARS], is_error)

    def as_output(self) -> str:
        """The ``function_call_output`` string the graph reads."""
        return json.dumps({"error": self.text} if self.is_error else {"result": self.text})


class GatewayMCP:
    """The gateway's MCP tools, one session per listing or call (sessions are cheap, short).

    With ``http`` the sessions share that client; without, each opens its own and closes it.
    """

    def __init__(self, base_url: str, api_key: str, http: httpx.AsyncClient | None = None) -> None:
        self.base_url = base_url
        self.api_key = api_key
        self.http = http

    @contextlib.asynccontextmanager
    async def session(self) -> AsyncIterator[MCPClient]:
        http = self.http or httpx.AsyncClient(timeout=httpx.Timeout(60.0, connect=5.0))
        try:
            async with MCPClient.for_gateway(http, self.base_url, self.api_key) as client:
                yield client
        finally:
            if self.http is None:
                await http.aclose()

    async def list_tools(self) -> list[MCPTool]:
        async with self.session() as client:
            return await client.list_tools()

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> ToolResult:
        async with self.session() as client:
            return await client.call_tool(name, arguments)


def _message(response: httpx.Response, request_id: int) -> dict[str, Any]:
    """The JSON-RPC reply with ``request_id`` from a JSON or SSE body."""
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        for line in response.text.splitlines():
            if not line.startswith("data:"):
                continue
            try:
                message = json.loads(line[5:])
            except ValueError:
                continue
            if isinstance(message, dict) and message.get("id") == request_id:
                return message
        raise MCPError("the MCP endpoint sent no reply")
    try:
        message = response.json()
    except ValueError as exc:
        raise MCPError("the MCP endpoint sent no JSON") from exc
    if not isinstance(message, dict):
        raise MCPError("the MCP endpoint sent an unexpected reply")
    return message


def parse_arguments(arguments: str) -> dict[str, Any]:
    """A function call's arguments; a malformed string becomes an error the graph can read."""
    try:
        value = json.loads(arguments or "{}")
    except ValueError as exc:
        raise MCPError("the call's arguments are not JSON") from exc
    if not isinstance(value, dict):
        raise MCPError("the call's arguments are not an object")
    return value


def tool_names(tools: Sequence[MCPTool]) -> list[str]:
    return [t.name for t in tools]
