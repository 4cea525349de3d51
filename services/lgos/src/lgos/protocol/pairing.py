"""Replayed tool exchanges: every call needs exactly one matching output of its own kind.

Both decoders feed calls and outputs in input order; violations are 400s raised before the graph
runs, streaming or not.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from lgos.errors import InvalidRequestError

CallKind = Literal["function", "custom"]


@dataclass
class CallLedger:
    _calls: dict[str, tuple[CallKind, str]] = field(default_factory=dict)
    _answered: set[str] = field(default_factory=set)

    def call(self, call_id: str, kind: CallKind, param: str) -> None:
        if call_id in self._calls:
            raise InvalidRequestError(
                f"Duplicate tool call id '{call_id}'.", param=param, code="duplicate_call_id"
            )
        self._calls[call_id] = (kind, param)

    def output(self, call_id: str, kind: CallKind, param: str) -> None:
        if call_id not in self._calls:
            raise InvalidRequestError(
                f"No tool call found for output with call id '{call_id}'.",
                param=param,
                code="unmatched_tool_output",
            )
        if call_id in self._answered:
            raise InvalidRequestError(
                f"Duplicate output for tool call '{call_id}'.",
                param=param,
                code="duplicate_tool_output",
            )
        expected, _ = self._calls[call_id]
        if expected != kind:
            raise InvalidRequestError(
                f"Tool call '{call_id}' is a {expected} call; answer it with a matching "
                f"{expected} output.",
                param=param,
                code="mismatched_tool_output",
            )
        self._answered.add(call_id)

    def finish(self) -> None:
        for call_id, (_, param) in self._calls.items():
            if call_id not in self._answered:
                raise InvalidRequestError(
                    f"Tool call '{call_id}' has no matching output; send each call's result "
                    "after it.",
                    param=param,
                    code="missing_tool_output",
                )
