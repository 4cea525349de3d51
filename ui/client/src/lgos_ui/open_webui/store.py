"""Per-chat state the pipe keeps beside Open WebUI's history: the Responses items of each
exchange, the pending review, uploaded files, the background run.

Open WebUI keeps chats as text; LGOS needs the Responses items a turn produced (function and
interrupt exchanges replay unchanged). So each chat's items are kept in a small JSON store, keyed
by chat id, and matched against Open WebUI's history on every request.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lgos_ui.events import BackgroundRun
from lgos_ui.ledger import Item
from lgos_ui.review import PendingReview


@dataclass
class Exchange:
    """One user turn as Open WebUI shows it, and every item LGOS saw for it."""

    user: str
    items: list[Item] = field(default_factory=list)


@dataclass
class ChatState:
    exchanges: list[Exchange] = field(default_factory=list)
    review: PendingReview | None = None
    files: dict[str, str] = field(default_factory=dict)
    """Open WebUI file id → Files service id (each attachment is uploaded once)."""
    background: dict[str, str] | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "exchanges": [{"user": e.user, "items": e.items} for e in self.exchanges],
            "review": self.review.to_json() if self.review else None,
            "files": self.files,
            "background": self.background,
        }

    @classmethod
    def from_json(cls, value: Any) -> ChatState:
        if not isinstance(value, Mapping):
            return cls()
        exchanges = [
            Exchange(
                str(e.get("user", "")), [i for i in e.get("items") or [] if isinstance(i, dict)]
            )
            for e in value.get("exchanges") or []
            if isinstance(e, Mapping)
        ]
        files = value.get("files")
        background = value.get("background")
        return cls(
            exchanges=exchanges,
            review=PendingReview.from_json(value.get("review")),
            files={str(k): str(v) for k, v in files.items()} if isinstance(files, Mapping) else {},
            background=dict(background) if isinstance(background, Mapping) else None,
        )


class ChatStore:
    """One JSON file per chat, written atomically (a crash never leaves half a file)."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def _path(self, chat_id: str) -> Path:
        safe = re.sub(r"[^A-Za-z0-9_.-]", "_", chat_id)[:200] or "_"
        return self.root / f"{safe}.json"

    def load(self, chat_id: str) -> ChatState:
        try:
            return ChatState.from_json(json.loads(self._path(chat_id).read_text()))
        except (OSError, ValueError):
            return ChatState()

    def save(self, chat_id: str, state: ChatState) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        path = self._path(chat_id)
        fd, tmp = tempfile.mkstemp(dir=self.root, prefix=".chat-")
        with os.fdopen(fd, "w") as out:
            json.dump(state.to_json(), out, separators=(",", ":"))
        os.replace(tmp, path)


@dataclass
class ChatConversation:
    """One chat's state as a turn's :class:`~lgos_ui.turn.Conversation`: items join the latest
    exchange, and every change is written through."""

    store: ChatStore
    chat_id: str
    state: ChatState

    def items(self) -> list[Item]:
        return [dict(i) for e in self.state.exchanges for i in e.items]

    def save(self) -> None:
        self.store.save(self.chat_id, self.state)

    async def add(self, items: Sequence[Item], review: PendingReview | None = None) -> None:
        if not self.state.exchanges:
            self.state.exchanges.append(Exchange(""))
        self.state.exchanges[-1].items.extend(dict(i) for i in items)
        if review is not None:
            self.state.review = review  # stored before the person is asked
        self.save()

    async def save_background(self, run: BackgroundRun | None) -> None:
        self.state.background = run.to_json() if run is not None else None
        self.save()
