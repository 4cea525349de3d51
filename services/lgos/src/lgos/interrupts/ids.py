"""The interrupt codec: opaque Response and call ids that carry run and interrupt identity.

A paused Response id is ``resp_lg_<run uuid hex>_<random hex>``: the run id locates the paused
operation, the random part makes each Response distinct. A call id is ``call_lg_<native
LangGraph interrupt id>``. Clients store and return both unchanged.
"""

from __future__ import annotations

import re
import secrets
from uuid import UUID

INTERRUPT_TOOL = "lgos_interrupt"
_RESPONSE = re.compile(r"^resp_lg_([0-9a-f]{32})_([0-9a-f]{32})$")
_CALL = re.compile(r"^call_lg_([0-9a-f]{1,64})$")


def paused_response_id(run_id: UUID) -> str:
    return f"resp_lg_{run_id.hex}_{secrets.token_hex(16)}"


def run_id_of(response_id: str) -> UUID | None:
    match = _RESPONSE.match(response_id)
    return UUID(hex=match.group(1)) if match else None


def call_id(interrupt_id: str) -> str:
    return f"call_lg_{interrupt_id}"


def interrupt_id_of(call: str) -> str | None:
    match = _CALL.match(call)
    return match.group(1) if match else None
