"""What a chat turn leaves in a private stack's logs (its state folder): the UI backend's own
lines are service_kit's JSON with the turn's request id, that id is on LGOS's ``request`` line,
and neither the prompt nor a key is written."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lgos_stack.keys import DEV_GATEWAY_KEY, FILES_DEV_KEY, LGOS_DEV_KEY

KEYS = (DEV_GATEWAY_KEY, LGOS_DEV_KEY, FILES_DEV_KEY)
"""The stack's keys (a private stack runs on the local defaults)."""
FIXED = ["ts", "level", "logger", "event"]
LGOS_LOGS = ("lgos.log", "lgos-2.log")
"""Both LGOS instances the gateway balances over."""
GENERATED_ID = re.compile(r"req_[0-9a-f]{32}")


class LogTail:
    """The lines a log file gets from now on."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.start = path.stat().st_size if path.exists() else 0

    def text(self) -> str:
        with self.path.open("rb") as log:
            log.seek(self.start)
            return log.read().decode(errors="replace")

    def records(self, loggers: Sequence[str]) -> list[dict[str, Any]]:
        """The JSON lines of ``loggers`` (and their children)."""
        found = []
        for line in self.text().splitlines():
            if not line.startswith('{"ts"'):
                continue
            record: dict[str, Any] = json.loads(line)
            if str(record.get("logger", "")).split(".")[0] in loggers:
                found.append(record)
        return found


class TurnLogs:
    """Tails of the UI's log and both LGOS logs, taken before a turn."""

    def __init__(self, state_dir: Path, ui_log: str, loggers: Sequence[str]) -> None:
        self.ui = LogTail(state_dir / ui_log)
        self.lgos = [LogTail(state_dir / name) for name in LGOS_LOGS if (state_dir / name).exists()]
        self.loggers = loggers

    def check(self, prompt: str, model: str, whole_ui_log: bool) -> list[dict[str, Any]]:
        """After the turn: the UI's new lines (JSON in the fixed shape, one request id, the
        turn's ``response`` line completed), LGOS's ``request`` line with that id; no prompt or
        key in our lines (``whole_ui_log``: in anything the UI process wrote) nor in LGOS's."""
        deadline = time.monotonic() + 15
        while True:
            ours = self.ui.records(self.loggers)
            responses = [r for r in ours if r["event"] == "response" and r.get("model") == model]
            if responses or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        assert responses, f"no response line of {model} in {self.ui.path}:\n{self.ui.text()}"
        assert all(list(r)[:4] == FIXED for r in ours), ours
        request_id = str(responses[-1]["request_id"])
        assert GENERATED_ID.fullmatch(request_id), request_id
        assert responses[-1]["status"] == "completed" and responses[-1]["duration_ms"] > 0
        # Lines outside a turn (a catalog read for the profile list) carry no id.
        assert {r["request_id"] for r in ours if "request_id" in r} == {request_id}, ours
        served = self.lgos_requests(request_id)
        assert [r["route"] for r in served] == ["/v1/responses"], served
        written = self.ui.text() if whole_ui_log else "\n".join(json.dumps(r) for r in ours)
        for text in (written, *(tail.text() for tail in self.lgos)):
            assert prompt not in text
            assert not [key for key in KEYS if key in text]
        return ours

    def lgos_requests(self, request_id: str) -> list[dict[str, Any]]:
        """LGOS's ``request`` lines for ``request_id`` (written as its stream ends)."""
        deadline = time.monotonic() + 10
        while True:
            found = [
                r
                for tail in self.lgos
                for r in tail.records(("service_kit",))
                if r["event"] == "request" and r.get("request_id") == request_id
            ]
            if found or time.monotonic() > deadline:
                return found
            time.sleep(0.1)
