"""The MCP client against an in-memory streamable-HTTP endpoint (SSE replies, a session id)."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from lgos_ui.mcp import GatewayMCP, MCPClient, MCPError, ToolResult, parse_arguments


class FakeEndpoint:
    """Answers like LiteLLM's /mcp: SSE-framed JSON-RPC, an mcp-session-id, bearer auth."""

    def __init__(self) -> None:
        self.methods: list[str] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        if request.headers.get("authorization") != "Bearer sk-gw":
            return httpx.Response(401, json={"error": {"message": "bad key"}})
        if request.method == "DELETE":
            return httpx.Response(200)
        message = json.loads(request.content)
        self.methods.append(message["method"])
        if "id" not in message:
            return httpx.Response(202)
        result: dict[str, Any]
        if message["method"] == "initialize":
            result = {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "serverInfo": {"name": "gw"},
            }
        elif message["method"] == "tools/list":
            assert request.headers["mcp-session-id"] == "s-1"
            result = {
                "tools": [
                    {
                        "name": "demo_db-execute_sql",
                        "description": "Run SQL",
                        "inputSchema": {
                            "type": "object",
                            "properties": {"sql": {"type": "string"}},
                        },
                    }
                ]
            }
        elif message["params"]["arguments"].get("sql", "").startswith("DELETE"):
            result = {"content": [{"type": "text", "text": "READONLY_VIOLATION"}], "isError": True}
        else:
            result = {"content": [{"type": "text", "text": '[{"name": "atlas"}]'}]}
        reply = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result})
        body = f"event: message\ndata: {reply}\n\n"
        return httpx.Response(
            200, text=body, headers={"content-type": "text/event-stream", "mcp-session-id": "s-1"}
        )


async def test_list_and_call_tools_through_one_session() -> None:
    endpoint = FakeEndpoint()
    async with httpx.AsyncClient(transport=httpx.MockTransport(endpoint)) as http:
        async with MCPClient.for_gateway(http, "http://gw:3000/v1", "sk-gw") as client:
            (tool,) = await client.list_tools()
            ok = await client.call_tool(tool.name, {"sql": "SELECT name FROM projects"})
            refused = await client.call_tool(tool.name, {"sql": "DELETE FROM projects"})
    assert endpoint.methods == [
        "initialize",
        "notifications/initialized",
        "tools/list",
        "tools/call",
        "tools/call",
    ]
    assert tool.as_function()["name"] == "demo_db-execute_sql"
    assert tool.as_function()["parameters"]["properties"] == {"sql": {"type": "string"}}
    assert json.loads(ok.as_output()) == {"result": '[{"name": "atlas"}]'}
    assert refused.is_error and json.loads(refused.as_output()) == {"error": "READONLY_VIOLATION"}


async def test_a_refused_key_is_an_mcp_error() -> None:
    async with httpx.AsyncClient(transport=httpx.MockTransport(FakeEndpoint())) as http:
        with pytest.raises(MCPError, match="401"):
            async with MCPClient(http, "http://gw/mcp", "wrong"):
                pass


def test_results_and_arguments() -> None:
    assert ToolResult.of({"structuredContent": {"rows": 1}}).text == '{"rows": 1}'
    assert parse_arguments('{"sql": "x"}') == {"sql": "x"}
    with pytest.raises(MCPError):
        parse_arguments("[1]")
    with pytest.raises(MCPError):
        parse_arguments("{nope")


async def test_the_gateways_tools_open_a_session_per_listing_and_per_call() -> None:
    endpoint = FakeEndpoint()
    async with httpx.AsyncClient(transport=httpx.MockTransport(endpoint)) as http:
        gateway = GatewayMCP("http://gw/v1", "sk-gw", http)
        (tool,) = await gateway.list_tools()
        result = await gateway.call_tool(tool.name, {"sql": "SELECT 1"})
    assert result == ToolResult('[{"name": "atlas"}]', False)
    session = ["initialize", "notifications/initialized"]
    assert endpoint.methods == [*session, "tools/list", *session, "tools/call"]
