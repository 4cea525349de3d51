"""MCP through the gateway: dbhub's read-only SQL tool, listed and executed via LiteLLM's /mcp."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import psycopg
import pytest

from tests.support.gateways import GATEWAY_KEY
from tests.support.mcp_client import MCPError, MCPSession
from tests.support.servers import Server

AUTH = {"Authorization": f"Bearer {GATEWAY_KEY}"}


@pytest.fixture
def mcp(litellm_gateway: Server) -> MCPSession:
    session = MCPSession(f"{litellm_gateway.url}/mcp", AUTH)
    session.initialize()
    return session


def test_gateway_lists_only_the_allowlisted_tool(mcp: MCPSession, dbhub: Server) -> None:
    direct = MCPSession(f"{dbhub.url}/mcp")
    direct.initialize()
    assert sorted(direct.tool_names()) == ["execute_sql", "search_objects"]
    assert mcp.tool_names() == ["demo_db-execute_sql"]  # server-prefixed, allowlisted


def test_sql_runs_through_the_gateway(mcp: MCPSession) -> None:
    result = mcp.call(
        "demo_db-execute_sql",
        {"sql": "SELECT name FROM projects WHERE status = 'active' ORDER BY id"},
    )
    assert not result.get("isError")
    payload = json.loads(result["content"][0]["text"])
    assert payload["success"] is True
    assert [row["name"] for row in payload["data"]["rows"]] == ["lgos", "files-service"]


def test_writes_are_refused(mcp: MCPSession) -> None:
    result = mcp.call("demo_db-execute_sql", {"sql": "DELETE FROM releases"})
    assert result["isError"] is True
    assert json.loads(result["content"][0]["text"])["code"] == "READONLY_VIOLATION"
    count = mcp.call("demo_db-execute_sql", {"sql": "SELECT count(*) AS n FROM releases"})
    assert json.loads(count["content"][0]["text"])["data"]["rows"] == [{"n": "4"}]


def test_a_tool_outside_the_allowlist_cannot_be_called(mcp: MCPSession) -> None:
    result = mcp.call("demo_db-search_objects", {"object_type": "table"})
    assert result["isError"] is True
    assert "search_objects is not allowed" in result["content"][0]["text"]


def test_mcp_needs_the_gateway_key(litellm_gateway: Server) -> None:
    anonymous = httpx.post(
        f"{litellm_gateway.url}/mcp",
        headers={"Accept": "application/json, text/event-stream"},
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
    )
    assert anonymous.status_code == 401
    with pytest.raises(MCPError, match="401"):
        MCPSession(f"{litellm_gateway.url}/mcp", {"Authorization": "Bearer wrong"}).request(
            "tools/list"
        )


def test_turning_read_only_off_still_writes_nothing(mcp: MCPSession, gateway_state: Path) -> None:
    """dbhub checks only a statement's first word and the read-only default is a session
    setting anyone may change: the role's privileges must refuse what a SELECT could write."""
    off = mcp.call(
        "demo_db-execute_sql",
        {"sql": "SELECT set_config('default_transaction_read_only', 'off', false)"},
    )
    assert not off.get("isError")
    large_object = mcp.call(
        "demo_db-execute_sql", {"sql": "SELECT lo_from_bytea(0, convert_to('x', 'UTF8'))"}
    )
    assert large_object["isError"] is True
    assert "permission denied" in large_object["content"][0]["text"]

    dsn = dbhub_dsn(gateway_state / "dbhub.toml")
    with psycopg.connect(dsn, autocommit=True) as reader:
        reader.execute("SET default_transaction_read_only = off")
        for statement in (
            "CREATE TEMP TABLE scratch (x int)",
            "SELECT lo_create(0)",
            "INSERT INTO releases (id, project_id, version, released_on) "
            "VALUES (99, 1, 'x', '2024-01-01')",
        ):
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                reader.execute(statement)


def dbhub_dsn(config: Path) -> str:
    line = next(line for line in config.read_text().splitlines() if line.startswith("dsn = "))
    return str(json.loads(line.removeprefix("dsn = ")))
