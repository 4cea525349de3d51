"""display-file: make a small chart, store it in the Files service, ask the client to show it.

The graph draws a PNG bar chart of the request's word lengths, uploads it to the Files API
(``DEMO_API_FILES_BASE_URL`` / ``DEMO_API_FILES_API_KEY``) and calls the client function
``display_file({"file_id": ...})`` — only when the client offered it. Once the client's
``function_call_output`` arrives, it answers naming the file. No bytes or URLs enter the
transcript.
"""

from __future__ import annotations

import struct
import uuid
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import httpx
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.pregel import Pregel
from langgraph.runtime import Runtime
from lgos import ClientSettings, GraphConfig, GraphRequest
from pydantic_settings import BaseSettings, SettingsConfigDict
from service_kit.context import inject_httpx

DISPLAY_FILE = "display_file"
WIDTH, HEIGHT = 240, 120


class FilesSettings(BaseSettings):
    """``DEMO_API_FILES_*``: where generated files are stored (the stack's Files service)."""

    model_config = SettingsConfigDict(env_prefix="DEMO_API_", extra="ignore", env_ignore_empty=True)

    files_base_url: str = "http://127.0.0.1:3006/v1"
    files_api_key: str = "sk-files-local-only"


@dataclass(frozen=True)
class DisplayContext:
    tools: Sequence[Mapping[str, Any]] = ()


def display_context(request: GraphRequest, settings: ClientSettings | None) -> DisplayContext:
    return DisplayContext(request.tools)


def png_chart(values: Sequence[int]) -> bytes:
    """A bar chart as an 8-bit RGB PNG (no imaging library needed)."""
    bars = list(values[:12]) or [1]
    top = max(bars)
    slot = WIDTH // len(bars)
    rows = []
    for y in range(HEIGHT):
        row = bytearray(b"\x00")  # filter type: none
        for x in range(WIDTH):
            index = min(x // slot, len(bars) - 1)
            height = bars[index] * (HEIGHT - 10) // top
            inside = x % slot not in (0, slot - 1) and HEIGHT - y <= height
            row += bytes((37, 99, 235) if inside else (248, 250, 252))
        rows.append(bytes(row))

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", WIDTH, HEIGHT, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(b"".join(rows)))
        + chunk(b"IEND", b"")
    )


async def upload(data: bytes, filename: str, settings: FilesSettings) -> str:
    async with httpx.AsyncClient(timeout=30.0, event_hooks={"request": [inject_httpx]}) as client:
        response = await client.post(
            f"{settings.files_base_url.rstrip('/')}/files",
            headers={"Authorization": f"Bearer {settings.files_api_key}"},
            data={"purpose": "user_data"},
            files={"file": (filename, data, "image/png")},
        )
        response.raise_for_status()
        file_id = response.json()["id"]
    assert isinstance(file_id, str)
    return file_id


def offered(tools: Sequence[Mapping[str, Any]]) -> bool:
    return any(t.get("name") == DISPLAY_FILE for t in tools)


def build() -> Pregel[Any, Any, Any, Any]:
    settings = FilesSettings()

    async def respond(state: MessagesState, runtime: Runtime[DisplayContext]) -> dict[str, object]:
        messages = state["messages"]
        last = messages[-1] if messages else None
        if isinstance(last, ToolMessage):
            shown = '"displayed"' in last.text
            text = "The chart is shown above." if shown else "The chart could not be shown."
            return {"messages": [AIMessage(content=text)]}
        humans = [m for m in messages if isinstance(m, HumanMessage)]
        words = (humans[-1].text if humans else "").split() or ["chart"]
        file_id = await upload(png_chart([len(w) for w in words]), "word-lengths.png", settings)
        context = runtime.context or DisplayContext()
        if not offered(context.tools):
            text = f"I made a chart of your words' lengths and stored it as file {file_id}."
            return {"messages": [AIMessage(content=text)]}
        call = {
            "id": f"call_{uuid.uuid4().hex}",
            "name": DISPLAY_FILE,
            "args": {"file_id": file_id},
            "type": "tool_call",
        }
        return {"messages": [AIMessage(content="", tool_calls=[call])]}

    builder = StateGraph(MessagesState, context_schema=DisplayContext)
    builder.add_node("respond", respond)
    builder.add_edge(START, "respond")
    return builder.compile(name="display-file")


CONFIG = GraphConfig(
    graph=build,
    description="Draws a chart of your message's word lengths and shows it with display_file.",
    client_tools=(DISPLAY_FILE,),
    context_factory=display_context,
)
