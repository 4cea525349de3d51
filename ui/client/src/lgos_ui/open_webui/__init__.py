"""What the Open WebUI pipe (a single-file Function) needs beyond the shared client logic.

Pure logic, no ``open_webui`` imports: the per-chat store (:mod:`.store`), Open WebUI's history
as Responses input (:mod:`.history`), settings as chat variables (:mod:`.variables`), reviews as
its ask-user card (:mod:`.cards`), turn events as its chunks and events (:mod:`.render`), and one
request to the pipe (:mod:`.reply`).
"""

from lgos_ui.open_webui.cards import (
    ask_user_arguments,
    ask_user_chunk,
    card_answer,
    review_markdown,
)
from lgos_ui.open_webui.history import matched_prefix, message_text, rebuild_ledger, turns_of
from lgos_ui.open_webui.reply import Emitter, OpenWebUITools, Reply
from lgos_ui.open_webui.store import ChatConversation, ChatState, ChatStore, Exchange
from lgos_ui.open_webui.variables import settings_values, suggestion_prompts, variables_prompt

__all__ = [
    "ChatConversation",
    "ChatState",
    "ChatStore",
    "Emitter",
    "Exchange",
    "OpenWebUITools",
    "Reply",
    "ask_user_arguments",
    "ask_user_chunk",
    "card_answer",
    "matched_prefix",
    "message_text",
    "rebuild_ledger",
    "review_markdown",
    "settings_values",
    "suggestion_prompts",
    "turns_of",
    "variables_prompt",
]
