"""Selected server tool activity, read from completed root-graph updates.

Only the root graph's own updates count: nested subgraph updates and replayed input are never
new activity. Each public call id may appear once, and every call needs its result before the
run can complete.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator
from typing import Any

from langchain_core.messages import AIMessage, ToolMessage

from lgos.runtime.events import ServerToolKind, ToolActivity, ToolEvent

WEB_SEARCH = "web_search"


class ToolActivityError(RuntimeError):
    """The graph broke the server-tool contract (repeated call id, call without a result)."""


def _messages(update: Any) -> list[Any]:
    if not isinstance(update, dict):
        return []
    messages = update.get("messages")
    if isinstance(messages, list):
        return messages
    return [messages] if messages is not None else []


def tool_input(kind: ServerToolKind, args: dict[str, Any]) -> str:
    """A custom tool's free-form input (LangChain's ``__arg1``) or the search query."""
    for key in ("__arg1", "query", "input"):
        if isinstance(args.get(key), str):
            return str(args[key])
    if len(args) == 1:
        return str(next(iter(args.values())))
    return str(args)


def tool_output(message: ToolMessage) -> str:
    if isinstance(message.content, list):
        for block in message.content:
            if isinstance(block, dict) and block.get("type") == "custom_tool_call_output":
                return str(block.get("output", ""))
    return message.text


class ToolTracker:
    """Turns root-graph updates into ``ToolEvent``s (calls, then their results), in order."""

    def __init__(self, selected: Collection[str]) -> None:
        self.selected = frozenset(selected)
        self.activity: dict[str, ToolActivity] = {}

    def observe(self, updates: Any) -> Iterator[ToolEvent]:
        if not isinstance(updates, dict):
            return
        for update in updates.values():
            for message in _messages(update):
                if isinstance(message, AIMessage):
                    yield from self._calls(message)
                elif isinstance(message, ToolMessage):
                    activity = self.activity.get(message.tool_call_id)
                    if activity is not None and activity.output is None:
                        activity.output = tool_output(message)
                        yield ToolEvent(activity, returned=True)

    def _calls(self, message: AIMessage) -> Iterator[ToolEvent]:
        for call in message.tool_calls:
            name = call["name"]
            if name not in self.selected:
                continue  # unselected internal tools stay private
            call_id = str(call["id"])
            if call_id in self.activity:
                raise ToolActivityError(f"server tool call id {call_id!r} was emitted twice")
            kind: ServerToolKind = "web_search" if name == WEB_SEARCH else "custom"
            activity = ToolActivity(call_id, name, kind, tool_input(kind, call["args"]))
            self.activity[call_id] = activity
            yield ToolEvent(activity)

    def finish(self) -> list[ToolActivity]:
        pending = [a.call_id for a in self.activity.values() if a.output is None]
        if pending:
            raise ToolActivityError(f"server tool calls without a result: {pending}")
        return list(self.activity.values())
