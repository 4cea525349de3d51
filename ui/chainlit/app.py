"""The LGOS Chainlit app (port 3002): every graph the gateway serves, usable in a browser.

    chainlit run app.py --headless --host 127.0.0.1 --port 3002

It talks only to the gateway (``OPENAI_GATEWAY_BASE_URL`` + ``OPENAI_GATEWAY_API_KEY``): the
catalog, Responses, Files and MCP. Client logic lives in :mod:`lgos_ui`; this file holds the
Chainlit hooks.
"""

from __future__ import annotations

import asyncio
import hmac
import logging
from pathlib import Path
from typing import Any

# Chainlit puts this file's folder on sys.path while it loads it: lgos_chainlit imports from here.
import chainlit as cl
from chainlit.data.chainlit_data_layer import ChainlitDataLayer
from chainlit.types import ThreadDict
from lgos_chainlit import logs, state, turns
from lgos_chainlit.background import CANCEL_ACTION, cancel, start_background, watch_background
from lgos_chainlit.config import AppSettings
from lgos_chainlit.gateway import Gateway
from lgos_chainlit.reviews import (
    REVIEW_ACTION,
    reattach_review,
    remove_review_buttons,
    send_review,
)
from lgos_chainlit.schema import ensure_schema
from lgos_chainlit.storage import DiskStorageClient, install_route
from lgos_chainlit.turns import new_turn
from lgos_chainlit.widgets import values_from, widgets
from lgos_ui import LIMITED_NOTICE, GraphEntry, answer_from_text, default_entry, setting_fields
from lgos_ui.catalog import entry_from_extension
from lgos_ui.turn import Turn
from openai import AsyncOpenAI
from service_kit import context

log = logging.getLogger("lgos_chainlit")

SETTINGS = AppSettings.from_env()
logs.configure(SETTINGS.log_level)
GATEWAY = Gateway(SETTINGS)
# Chainlit sends the thread to the browser only after on_chat_resume returns (Chainlit #2611):
# anything sent from the hook itself would vanish, so a pending review is shown just after it.
RESUME_DELAY = 1.0
PENDING: set[asyncio.Task[None]] = set()


if SETTINGS.database_url:
    database_url = SETTINGS.database_url
    element_files = DiskStorageClient(SETTINGS.files_dir)
    install_route(element_files)

    @cl.data_layer
    def data_layer() -> ChainlitDataLayer:
        return ChainlitDataLayer(database_url=database_url, storage_client=element_files)

    @cl.on_app_startup
    async def create_tables() -> None:
        await ensure_schema(database_url)


@cl.password_auth_callback
def login(username: str, password: str) -> cl.User | None:
    ok = hmac.compare_digest(username, SETTINGS.username) and hmac.compare_digest(
        password, SETTINGS.password
    )
    return cl.User(identifier=username, metadata={"provider": "credentials"}) if ok else None


@cl.set_chat_profiles
async def chat_profiles(user: cl.User | None = None, language: str | None = None) -> list[Any]:
    """One profile per graph, opening on the showcase; each graph's examples are its starters."""
    entries = await GATEWAY.catalog()
    default = default_entry(entries, SETTINGS.default_graph)
    return [
        cl.ChatProfile(
            name=entry.graph,
            markdown_description=entry.description or LIMITED_NOTICE,
            default=entry is default,
            starters=[
                cl.Starter(label=example.label, message=example.prompt)
                for example in entry.examples
            ]
            or None,
        )
        for entry in entries
    ]


async def current_entry() -> GraphEntry | None:
    graph = cl.user_session.get(state.GRAPH) or cl.user_session.get("chat_profile")
    return await GATEWAY.entry(graph)


async def start_graph(resumed_values: dict[str, Any] | None = None) -> None:
    entry = await current_entry()
    if entry is None:
        error = GATEWAY.catalog_error or "no graph is published"
        await cl.Message(
            content=f"**Warning:** The gateway's catalog is unavailable: {error}"
        ).send()
        return
    cl.user_session.set(state.GRAPH, entry.graph)
    if entry.limited:
        if resumed_values is None:
            await cl.Message(content=f"**{entry.graph}** — {LIMITED_NOTICE}").send()
        return
    fields = setting_fields(entry.settings_schema, entry.settings_defaults)
    values = {f.id: f.default for f in fields}
    values.update(resumed_values or {})
    cl.user_session.set(state.SETTINGS, values)
    if fields:
        await cl.ChatSettings(widgets(fields, values)).send()


@cl.on_chat_start
async def on_chat_start() -> None:
    await start_graph()


@cl.on_chat_resume
async def on_chat_resume(thread: ThreadDict) -> None:
    metadata = thread.get("metadata") or {}
    state.restore(metadata if isinstance(metadata, dict) else {})
    await start_graph(state.settings_values())
    review = state.review()
    background = cl.user_session.get(state.BACKGROUND)
    if review is not None or background:
        PENDING.add(task := asyncio.create_task(show_pending_later(background)))
        task.add_done_callback(PENDING.discard)


async def show_pending_later(background: Any) -> None:
    await asyncio.sleep(RESUME_DELAY)
    review = state.review()
    if review is not None:
        await reattach_review(review)
    elif isinstance(background, dict) and background.get("response_id"):
        # Polling needs no graph metadata: a graph gone from the catalog is still polled.
        model = str(background.get("model") or "")
        entry = await current_entry() or entry_from_extension(model, None)
        watch_background(new_turn(GATEWAY, entry), str(background["response_id"]))


@cl.on_settings_update
async def on_settings_update(submitted: dict[str, Any]) -> None:
    entry = await current_entry()
    if entry is None or entry.limited:
        return
    fields = setting_fields(entry.settings_schema, entry.settings_defaults)
    await state.save(**{state.SETTINGS: values_from(fields, submitted)})


async def upload_files(message: cl.Message, client: AsyncOpenAI) -> list[str]:
    """Attachments go to the Files service through the gateway; the graph gets their ids."""
    ids: list[str] = []
    for element in message.elements or []:
        path = getattr(element, "path", None)
        if not path:
            continue
        # Chainlit deletes session files with the session: read them now.
        data = await asyncio.to_thread(Path(path).read_bytes)
        mime = getattr(element, "mime", None) or "application/octet-stream"
        uploaded = await client.files.create(file=(element.name, data, mime), purpose="user_data")
        ids.append(uploaded.id)
    return ids


@cl.on_message
async def on_message(message: cl.Message) -> None:
    entry = await current_entry()
    if entry is None:
        await cl.Message(
            content="**Warning:** No graph is selected or the catalog is unavailable."
        ).send()
        return
    turn = new_turn(GATEWAY, entry)
    # Every line this message causes carries the id its gateway calls send.
    with context.bound(request_id=turn.request_id):
        await answer_message(turn, entry, message)


async def answer_message(turn: Turn, entry: GraphEntry, message: cl.Message) -> None:
    review = state.review()
    if review is not None:
        # Never an unrelated turn while a review waits: the message answers it.
        call = review.unanswered()[0]
        if not call.allow_other and message.content.strip().lower() not in call.choices:
            await cl.Message(
                content="A review is waiting: choose one of the buttons above to continue."
            ).send()
            return
        await cl.Message(content="Sent as your answer to the pending review.").send()
        await answer_review(
            turn, review.response_id, call.call_id, answer_from_text(message.content, call)
        )
        return
    if cl.user_session.get(state.BACKGROUND):
        await cl.Message(
            content="A background run of this chat is still working: wait for its report or "
            "press its Cancel button, then send your message again."
        ).send()
        return
    file_ids: list[str] = []
    if message.elements:
        if entry.limited:
            await cl.Message(content="Attachments are not sent: " + LIMITED_NOTICE).send()
        else:
            try:
                file_ids = await upload_files(message, turn.client)
            except Exception as exc:
                log.warning("upload failed", extra={"error": exc.__class__.__name__})
                await cl.Message(
                    content="**Warning:** The attachment could not be uploaded; nothing was sent."
                ).send()
                return
    ledger = state.ledger()
    ledger.add_user(message.content, file_ids)
    await state.save_ledger(ledger)
    if turn.runs_in_background:
        await start_background(turn, ledger.snapshot())
        return
    await turns.answer(turn, ledger.snapshot())


async def answer_review(turn: Turn, response_id: str, call_id: str, answer: str) -> None:
    review = state.review()
    if review is None or review.response_id != response_id:
        await cl.Message(content="That review was already answered.").send()
        return
    await remove_review_buttons()
    review = review.answered(call_id, answer)
    if not review.complete:
        await state.save_review(review)
        await send_review(review)
        return
    await state.save_review(None)
    await turns.resume(turn, review)


@cl.action_callback(REVIEW_ACTION)
async def on_review_action(action: cl.Action) -> None:
    entry = await current_entry()
    if entry is None:
        return
    payload = action.payload
    answer = str(payload.get("answer", ""))
    await cl.Message(content=f"Review answered: **{answer}**").send()
    turn = new_turn(GATEWAY, entry)
    with context.bound(request_id=turn.request_id):
        await answer_review(
            turn, str(payload.get("response_id")), str(payload.get("call_id")), answer
        )


@cl.action_callback(CANCEL_ACTION)
async def on_cancel_action(action: cl.Action) -> None:
    await cancel(GATEWAY.openai, str(action.payload.get("response_id")))


@cl.on_stop
async def on_stop() -> None:
    background = cl.user_session.get(state.BACKGROUND)
    if isinstance(background, dict) and background.get("response_id"):
        await cancel(GATEWAY.openai, str(background["response_id"]))
