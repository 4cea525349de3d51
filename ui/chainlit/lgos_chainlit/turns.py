"""The turn this app runs for a message, a review's answer or a background run.

The turn itself (requests, client tools, reviews, polling) is :class:`lgos_ui.turn.Turn`; this
app gives it the session's gateway, settings and thread state, and shows what it yields.
"""

from __future__ import annotations

import chainlit as cl
from lgos_ui import GraphEntry, PendingReview
from lgos_ui.ledger import Item
from lgos_ui.turn import Turn, request_client
from service_kit.context import new_request_id

from lgos_chainlit import state
from lgos_chainlit.gateway import Gateway
from lgos_chainlit.view import TurnView


def new_turn(gateway: Gateway, entry: GraphEntry) -> Turn:
    """A turn with a request id of its own: every gateway call it makes sends it."""
    settings = gateway.settings
    request_id = new_request_id()
    return Turn(
        request_client(gateway.openai, request_id),
        entry,
        state.ThreadConversation(),
        conversation_id=cl.context.session.thread_id,
        settings=state.settings_values(),
        runner=gateway.mcp,
        mcp_graphs=settings.mcp_graphs,
        poll_interval=settings.poll_interval,
        request_id=request_id,
    )


async def answer(turn: Turn, input_items: list[Item]) -> None:
    await TurnView().show_all(turn.run(input_items))


async def resume(turn: Turn, review: PendingReview) -> None:
    await TurnView().show_all(turn.resume(review))
