from __future__ import annotations

import json

from lgos_ui.catalog import GraphEntry
from lgos_ui.mcp import MCPTool
from lgos_ui.tools import (
    DISPLAY_FILE_TOOL,
    display_file_id,
    display_file_output,
    offered_tools,
    offers_mcp,
)

SQL = MCPTool("demo_db-execute_sql", "Run SQL", {"type": "object"})


def test_display_file_only_for_graphs_listing_it() -> None:
    plain = GraphEntry(model="lgos/a", graph="a", description="")
    lister = GraphEntry(
        model="lgos/b", graph="b", description="", client_tools=("display_file", "unknown")
    )
    assert offered_tools(plain) == []
    assert offered_tools(lister) == [DISPLAY_FILE_TOOL]
    assert DISPLAY_FILE_TOOL["strict"] is True


def test_mcp_tools_for_mcp_graphs_and_operator_named_ones_never_limited() -> None:
    mcp = GraphEntry(model="lgos/m", graph="m", description="", features=frozenset({"mcp_tools"}))
    other = GraphEntry(model="lgos/s", graph="s", description="")
    limited = GraphEntry(model="lgos/x", graph="x", description="", limited=True)
    assert offers_mcp(mcp) and not offers_mcp(other) and offers_mcp(other, ["s"])
    assert not offers_mcp(limited, ["x"])
    assert offered_tools(mcp, [SQL])[0]["name"] == "demo_db-execute_sql"
    assert offered_tools(limited, [SQL]) == []


def test_display_file_arguments_and_short_output() -> None:
    assert display_file_id('{"file_id": "file-1"}') == "file-1"
    assert display_file_id("{}") is None and display_file_id("nope") is None
    shown = json.loads(display_file_output("chart.png", shown=True))
    assert shown == {"status": "displayed", "filename": "chart.png"}
    assert json.loads(display_file_output(None, shown=False))["status"] == "not_displayed"


def test_server_tools_are_selected_per_request_before_client_tools() -> None:
    entry = GraphEntry(
        model="lgos/s",
        graph="s",
        description="",
        server_tools=("package_version", "web_search"),
        client_tools=("display_file",),
    )
    assert offered_tools(entry) == [
        {"type": "custom", "name": "package_version"},
        {"type": "web_search"},
        DISPLAY_FILE_TOOL,
    ]
    assert offered_tools(entry, server_tools=False) == [DISPLAY_FILE_TOOL]
