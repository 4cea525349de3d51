"""The function tools a UI offers a graph: its own client tools and the gateway's MCP tools."""

from __future__ import annotations

import json
import mimetypes
from collections.abc import Mapping, Sequence
from typing import Any

from lgos_ui.catalog import GraphEntry
from lgos_ui.mcp import MCPTool

DISPLAY_FILE = "display_file"
WEB_SEARCH = "web_search"
MCP_FEATURE = "mcp_tools"
FILE_INPUTS_FEATURE = "file_inputs"
IMPLEMENTED_CLIENT_TOOLS = frozenset({DISPLAY_FILE})

DISPLAY_FILE_TOOL: dict[str, Any] = {
    "type": "function",
    "name": DISPLAY_FILE,
    "description": "Show a file from the Files API to the person in the chat.",
    "parameters": {
        "type": "object",
        "properties": {"file_id": {"type": "string", "description": "The Files API id."}},
        "required": ["file_id"],
        "additionalProperties": False,
    },
    "strict": True,
}


def offers_mcp(entry: GraphEntry, extra_graphs: Sequence[str] = ()) -> bool:
    """MCP tools go to graphs advertising ``mcp_tools`` (and any the operator names)."""
    return not entry.limited and (entry.has(MCP_FEATURE) or entry.graph in extra_graphs)


def server_tool(name: str) -> dict[str, Any]:
    """How a request selects one of the graph's server tools."""
    return {"type": "web_search"} if name == WEB_SEARCH else {"type": "custom", "name": name}


def offered_tools(
    entry: GraphEntry, mcp_tools: Sequence[MCPTool] = (), *, server_tools: bool = True
) -> list[dict[str, Any]]:
    """The graph's advertised server tools (selected per request), then client tools: only for
    graphs listing them and only those this package implements, then the gateway's MCP tools."""
    if entry.limited:
        return []
    tools = [server_tool(name) for name in entry.server_tools] if server_tools else []
    if DISPLAY_FILE in entry.client_tools:
        tools.append(DISPLAY_FILE_TOOL)
    tools.extend(tool.as_function() for tool in mcp_tools)
    return tools


def display_file_id(arguments: str) -> str | None:
    try:
        value = json.loads(arguments or "{}")
    except ValueError:
        return None
    file_id = value.get("file_id") if isinstance(value, Mapping) else None
    return file_id if isinstance(file_id, str) and file_id else None


def display_file_output(filename: str | None, shown: bool) -> str:
    """The short ``function_call_output``: no bytes, no URL."""
    if shown:
        return json.dumps({"status": "displayed", "filename": filename or ""})
    return json.dumps({"status": "not_displayed", "reason": "the file could not be downloaded"})


PREVIEWED = ("text/markdown", "text/csv", "text/plain")
PREVIEW_CHARS = 4000


def mime_of(name: str) -> str:
    """A shown file's type by its name (``.md`` is Markdown; the stdlib may not know it)."""
    if name.lower().endswith(".md"):
        return "text/markdown"
    return mimetypes.guess_type(name)[0] or "application/octet-stream"


def text_preview(mime: str, content: bytes) -> str | None:
    """A fenced preview of a text file's start, or ``None`` for other types."""
    if mime not in PREVIEWED:
        return None
    text = content.decode("utf-8", errors="replace")[:PREVIEW_CHARS]
    return f"```{'csv' if mime == 'text/csv' else 'markdown'}\n{text}\n```"
