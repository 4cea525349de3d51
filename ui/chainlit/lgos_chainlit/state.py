"""Per-thread state: in the Chainlit user session and, written through, in the thread's metadata.

Chainlit copies the user session into thread metadata on disconnect and back on resume; the
pending review is written to the thread *before* the person is asked, so a reload, a lost socket
or an app restart finds it again.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import chainlit as cl
from chainlit.context import context
from chainlit.data import get_data_layer
from chainlit.user import PersistedUser
from lgos_ui import InputLedger, PendingReview
from lgos_ui.events import BackgroundRun
from lgos_ui.ledger import Item

log = logging.getLogger("lgos_chainlit")

GRAPH = "lgos_graph"
LEDGER = "lgos_ledger"
SETTINGS = "lgos_settings"
REVIEW = "lgos_review"
BACKGROUND = "lgos_background"
REVIEW_MESSAGE = "lgos_review_message"


async def save(**values: Any) -> None:
    """Set keys in the session and the thread's metadata (``None`` deletes a key)."""
    for key, value in values.items():
        cl.user_session.set(key, value)
    session = context.session
    data_layer = get_data_layer()
    if data_layer is None or not session.thread_id:
        return
    user_id = session.user.id if isinstance(session.user, PersistedUser) else None
    try:
        await data_layer.update_thread(
            thread_id=session.thread_id, user_id=user_id, metadata=dict(values)
        )
    except Exception:
        # The session still holds the state; Chainlit writes it again on disconnect.
        log.exception("could not persist the thread's state")


def ledger() -> InputLedger:
    items = cl.user_session.get(LEDGER) or []
    return InputLedger([dict(i) for i in items if isinstance(i, dict)])


async def save_ledger(value: InputLedger) -> None:
    await save(**{LEDGER: value.snapshot()})


def review() -> PendingReview | None:
    return PendingReview.from_json(cl.user_session.get(REVIEW))


async def save_review(value: PendingReview | None) -> None:
    await save(**{REVIEW: value.to_json() if value is not None else None})


def settings_values() -> dict[str, Any]:
    values = cl.user_session.get(SETTINGS)
    return dict(values) if isinstance(values, dict) else {}


def restore(metadata: dict[str, Any]) -> None:
    """On resume Chainlit already copied metadata into the session; make sure ours is there."""
    for key in (GRAPH, LEDGER, SETTINGS, REVIEW, BACKGROUND, REVIEW_MESSAGE):
        if key in metadata and cl.user_session.get(key) is None:
            cl.user_session.set(key, metadata[key])


class ThreadConversation:
    """This thread's state as a turn's :class:`lgos_ui.turn.Conversation`."""

    def items(self) -> list[Item]:
        return ledger().snapshot()

    async def add(self, items: Sequence[Item], review: PendingReview | None = None) -> None:
        value = ledger()
        value.add_output(items)
        await save_ledger(value)
        if review is not None:
            await save_review(review)  # persisted before the person is asked

    async def save_background(self, run: BackgroundRun | None) -> None:
        await save(**{BACKGROUND: run.to_json() if run is not None else None})
