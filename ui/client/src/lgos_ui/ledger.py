"""The client-kept Responses input ledger of one conversation.

LGOS keeps no conversation state: each request replays the ledger. ``response.output`` items are
appended unchanged (as the server sent them), then the client's function outputs; an interrupt
exchange stays in it too, so later turns replay the reviewed calls with their answers.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

Item = dict[str, Any]


def user_message(text: str, file_ids: Sequence[str] = ()) -> Item:
    """A user turn; attached files become ``input_file`` parts (ids only, never bytes)."""
    if not file_ids:
        return {"role": "user", "content": text}
    content: list[Item] = [{"type": "input_text", "text": text}]
    content.extend({"type": "input_file", "file_id": file_id} for file_id in file_ids)
    return {"role": "user", "content": content}


def function_output(call_id: str, output: str) -> Item:
    return {"type": "function_call_output", "call_id": call_id, "output": output}


@dataclass
class InputLedger:
    items: list[Item] = field(default_factory=list)

    def add_user(self, text: str, file_ids: Sequence[str] = ()) -> None:
        self.items.append(user_message(text, file_ids))

    def add_output(self, output: Iterable[Mapping[str, Any]]) -> None:
        self.items.extend(dict(item) for item in output)

    def add_function_output(self, call_id: str, output: str) -> None:
        self.items.append(function_output(call_id, output))

    def snapshot(self) -> list[Item]:
        return [dict(item) for item in self.items]

    def dumps(self) -> str:
        return json.dumps(self.items, separators=(",", ":"))

    @classmethod
    def loads(cls, raw: str | None) -> InputLedger:
        if not raw:
            return cls()
        try:
            items = json.loads(raw)
        except ValueError:
            return cls()
        return cls([i for i in items if isinstance(i, dict)] if isinstance(items, list) else [])


def output_items(response: Mapping[str, Any]) -> list[Item]:
    """A Response's ``output`` as plain dicts (from ``model_dump(exclude_unset=True)``)."""
    output = response.get("output")
    return [dict(i) for i in output if isinstance(i, Mapping)] if isinstance(output, list) else []


def function_calls(
    output: Iterable[Mapping[str, Any]], *, exclude: Sequence[str] = ()
) -> list[Item]:
    """The ``function_call`` items of an output, without the names in ``exclude``."""
    return [
        dict(item)
        for item in output
        if item.get("type") == "function_call" and item.get("name") not in exclude
    ]
