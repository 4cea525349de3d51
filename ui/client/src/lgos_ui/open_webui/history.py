"""Open WebUI's chat history, matched against the stored exchanges, as the Responses input."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from lgos_ui.ledger import Item, user_message
from lgos_ui.open_webui.store import ChatState, Exchange


def message_text(content: Any) -> str:
    """The text of an Open WebUI chat message (a string or a list of content parts)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            str(p.get("text", ""))
            for p in content
            if isinstance(p, Mapping) and p.get("type") == "text"
        )
    return ""


def turns_of(messages: Sequence[Mapping[str, Any]]) -> list[tuple[str, str]]:
    """(user text, assistant text) pairs; system prompts are Open WebUI's, not the graph's."""
    turns: list[tuple[str, str]] = []
    for message in messages:
        role = message.get("role")
        if role == "user":
            turns.append((message_text(message.get("content")), ""))
        elif role == "assistant" and turns:
            user, answer = turns[-1]
            turns[-1] = (user, answer + message_text(message.get("content")))
    return turns


def rebuild_ledger(earlier: Sequence[tuple[str, str]], state: ChatState) -> list[Item]:
    """The input items of every earlier turn.

    While Open WebUI's history matches the stored exchanges, their items replay unchanged; from
    the first turn that differs (an edited message, a chat from before the pipe), the history's
    text stands in, so a regenerated or edited chat still reads naturally.
    """
    items: list[Item] = []
    matched = True
    for index, (user, answer) in enumerate(earlier):
        exchange = state.exchanges[index] if index < len(state.exchanges) else None
        if matched and exchange is not None and exchange.user == user and exchange.items:
            items.extend(dict(i) for i in exchange.items)
            continue
        matched = False
        items.append(user_message(user))
        if answer:
            items.append({"role": "assistant", "content": answer})
    return items


def matched_prefix(earlier: Sequence[tuple[str, str]], state: ChatState) -> list[Exchange]:
    """The stored exchanges that still match the history (a new turn is stored after them)."""
    kept: list[Exchange] = []
    for (user, _), exchange in zip(earlier, state.exchanges, strict=False):
        if exchange.user != user:
            break
        kept.append(exchange)
    return kept
