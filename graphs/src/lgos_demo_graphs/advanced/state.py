"""advanced-graph's state: the conversation, the chosen path, and the note under review.

Everything here is checkpointed while a review is paused, so it holds only small, plain values:
attachments stay opaque file ids inside ``messages`` (and ``attached``) until the answering or
the drafting node reads them.
"""

from __future__ import annotations

from typing import Annotated, Literal, TypedDict

from langchain_core.messages import AIMessage, AnyMessage
from langgraph.graph.message import add_messages

Intent = Literal["chat", "research", "save", "research_and_save"]
"""The four workflows: chat is the default; a save happens only when the user asks for one."""

Decision = Literal["approve", "reject", "revise"]
"""A review's outcome: anything but approve or reject is revision feedback."""


class Note(TypedDict):
    """The note under review. ``note_id`` and ``filename`` stay fixed across redrafts."""

    note_id: str
    filename: str
    content: str
    revisions: list[str]
    """The feedback of each revision, oldest first."""


class AdvancedState(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]
    intent: Intent
    request: str
    """The latest user request's text (attachments as markers): what routing and drafting see."""
    attached: list[str]
    """The file ids attached to the latest request: what a note may be drafted from."""
    recent: list[str]
    """Recent conversation turns as ``role: text`` lines, oldest first (the same markers)."""
    sources: list[str]
    """The searches research chose."""
    findings: list[str]
    """Their outputs as text, for a note drafted from them."""
    note: Note
    decision: Decision
    note_outcome: str
    """What happened to the note, in words the answer can repeat."""
    reply: AIMessage
    """A final message written without a model call (a finished save or reject); the run ends."""
