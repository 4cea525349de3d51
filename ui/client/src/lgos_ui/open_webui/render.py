"""Turn events as Open WebUI shows them: status lines, sources, Markdown; and its attachments."""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lgos_ui.events import Citation, Finished, ToolActivity
from lgos_ui.tools import text_preview


def status_event(description: str, *, done: bool = False, hidden: bool = False) -> dict[str, Any]:
    return {"type": "status", "data": {"description": description, "done": done, "hidden": hidden}}


def source_event(citation: Citation) -> dict[str, Any]:
    """A clickable source under the answer (Open WebUI's ``source`` event)."""
    return {
        "type": "source",
        "data": {
            "source": {"name": citation.title, "url": citation.url},
            "document": [citation.title],
            "metadata": [{"source": citation.url, "name": citation.title, "url": citation.url}],
        },
    }


def tool_line(activity: ToolActivity) -> str:
    if activity.kind == "web_search_call":
        return f"Web search: {activity.summary}"
    if activity.kind == "custom_tool_call_output":
        return f"Tool {activity.name} → {short(activity.summary)}"
    return f"Tool {activity.name}: {short(activity.summary)}"


def short(text: str, limit: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def tool_text(value: Any) -> str:
    """An Open WebUI tool result as text: MCP content parts become their text."""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(p, Mapping) for p in value):
        texts = [str(p.get("text", "")) for p in value if p.get("type") == "text"]
        if texts:
            return "\n".join(texts)
    return json.dumps(value, default=str)


def outcome_note(result: Finished) -> str:
    if result.outcome == "completed" or not result.message:
        return ""
    return f"\n\n⚠️ {result.message}"


@dataclass(frozen=True)
class Attachment:
    owui_id: str
    name: str
    path: Path
    mime: str


def attachment(item: Mapping[str, Any]) -> Attachment | None:
    """A file Open WebUI stored for this chat (``__files__`` entry), or ``None``."""
    inner = item.get("file") if isinstance(item.get("file"), Mapping) else {}
    assert isinstance(inner, Mapping)
    owui_id = item.get("id") or inner.get("id")
    path = inner.get("path") or item.get("path")
    if not isinstance(owui_id, str) or not isinstance(path, str) or not path:
        return None
    meta = inner.get("meta") if isinstance(inner.get("meta"), Mapping) else {}
    assert isinstance(meta, Mapping)
    name = str(item.get("name") or inner.get("filename") or meta.get("name") or Path(path).name)
    mime = str(meta.get("content_type") or "application/octet-stream")
    if name.lower().endswith(".md"):
        mime = "text/markdown"
    return Attachment(owui_id, name, Path(path), mime)


def file_markdown(name: str, mime: str, content: bytes) -> str:
    """A displayed file in the chat: an image inline, text as a preview."""
    if mime.startswith("image/"):
        data = base64.b64encode(content).decode()
        return f"**{name}**\n\n![{name}](data:{mime};base64,{data})"
    preview = text_preview(mime, content)
    if preview is not None:
        return f"**{name}**\n\n{preview}"
    return f"**{name}** ({len(content)} bytes)"
