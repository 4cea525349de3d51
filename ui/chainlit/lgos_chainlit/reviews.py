"""Reviews in the thread: a message with the draft and one button per choice.

The review itself is persisted by the turn before it is asked (``lgos_ui.turn``); buttons are
never persisted by Chainlit, so a reload or an app restart attaches fresh ones.
"""

from __future__ import annotations

import chainlit as cl
from lgos_ui import PendingReview

from lgos_chainlit import state

REVIEW_ACTION = "lgos_review"
REVIEW_BUTTONS = "lgos_review_buttons"


def review_buttons(review: PendingReview) -> list[cl.Action]:
    call = review.unanswered()[0]
    # One id per review and choice, the same in every session: a page resumed twice (a socket
    # reconnect under load) gets its buttons replaced by id rather than added again.
    return [
        cl.Action(
            name=REVIEW_ACTION,
            payload={"response_id": review.response_id, "call_id": call.call_id, "answer": c},
            label=c.capitalize(),
            id=f"review:{review.response_id}:{call.call_id}:{c}",
        )
        for c in call.choices
    ]


async def send_review(review: PendingReview) -> None:
    call = review.unanswered()[0]
    content = call.content_markdown()
    lines = [f"### Review requested\n\n**{call.question}**"]
    if content:
        lines.append(content)
    hint = "Approve or reject with the buttons"
    if call.allow_other:
        hint += ", or type a revision in the chat: your next message is sent as feedback"
    lines.append(f"_{hint}._")
    actions = review_buttons(review)
    message = cl.Message(content="\n\n".join(lines), actions=actions)
    await message.send()
    cl.user_session.set(REVIEW_BUTTONS, [action.to_dict() for action in actions])
    await state.save(**{state.REVIEW_MESSAGE: message.id})


async def reattach_review(review: PendingReview) -> None:
    """After a reload the review message is in the history but buttons are never persisted:
    attach fresh ones to it (or ask again when that message never made it)."""
    message_id = cl.user_session.get(state.REVIEW_MESSAGE)
    if not isinstance(message_id, str):
        await send_review(review)
        return
    # Chainlit can resume one page twice (a socket reconnect), each resume a new session that
    # knows nothing of the other's buttons: replace them by their shared ids, never add.
    actions = review_buttons(review)
    for action in actions:
        await action.remove()
        await action.send(for_id=message_id)
    cl.user_session.set(REVIEW_BUTTONS, [action.to_dict() for action in actions])


async def remove_review_buttons() -> None:
    """A review is answered once: its buttons go, however it was answered."""
    for action in cl.user_session.get(REVIEW_BUTTONS) or []:
        await cl.Action(**action).remove()
    cl.user_session.set(REVIEW_BUTTONS, None)
