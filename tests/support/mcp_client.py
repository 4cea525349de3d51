"""A minimal MCP streamable-HTTP client (JSON-RPC over POST, SSE or JSON replies) for tests.

The official ``mcp`` SDK lives only in LiteLLM's venv (it pins mcp 2.x); the protocol steps
tests need are three requests, so they are spelled out here.
"""

from __future__ import annotations

import json
from typing import Any

import httpx

PROTOCOL_VERSION = "2025-06-18"


class MCPError(RuntimeError):
    pass


class MCPSession:
    def __init__(self, url: str, headers: dict[str, str] | None = None) -> None:
        self.url = url
        self.headers = {
            "Accept": "application/json, text/event-stream",
            "Content-Type": "application/json",
            **(headers or {}),
        }
        self.next_id = 0

    def _post(self, payload: dict[str, Any]) -> httpx.Response:
        return httpx.post(self.url, headers=self.headers, json=payload, timeout=30.0)

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        self.next_id += 1
        payload: dict[str, Any] = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            payload["params"] = params
        response = self._post(payload)
        if response.status_code != 200:
            raise MCPError(f"{method}: HTTP {response.status_code} {response.text}")
        if response.headers["content-type"].startswith("text/event-stream"):
            data = [line[5:] for line in response.text.splitlines() if line.startswith("data:")]
            message = json.loads(data[-1])
        else:
            message = response.json()
        if "error" in message:
            raise MCPError(f"{method}: {message['error']}")
        result: dict[str, Any] = message["result"]
        return result

    def initialize(self) -> dict[str, Any]:
        params = {
            "protocolVersion": PROTOCOL_VERSION,
            "capabilities": {},
            "clientInfo": {"name": "lgos-tests", "version": "0"},
        }
        self.next_id += 1
        response = self._post(
            {"jsonrpc": "2.0", "id": self.next_id, "method": "initialize", "params": params}
        )
        response.raise_for_status()
        if session := response.headers.get("mcp-session-id"):
            self.headers["mcp-session-id"] = session
        self._post({"jsonrpc": "2.0", "method": "notifications/initialized"}).raise_for_status()
        return {"status": response.status_code}

    def tool_names(self) -> list[str]:
        return [tool["name"] for tool in self.request("tools/list")["tools"]]

    def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        return self.request("tools/call", {"name": name, "arguments": arguments})
