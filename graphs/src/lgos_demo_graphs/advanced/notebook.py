"""The ``notebook`` subgraph: draft exact Markdown, review it, and only then save it.

A request with attached files is drafted from their text (read as the answer reads them), so
"save the key points of this file" reviews a note of the file's content.

Every mutation comes after review: feedback returns to ``draft`` (same note identity), reject
ends with nothing written, approval alone reaches ``save``. ``save`` records a receipt before it
uploads, so a retry after an uncertain upload reuses the earlier file.
"""

from __future__ import annotations

import hashlib
import re
import uuid
from typing import Any, Literal, TypedDict

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, SystemMessage
from langgraph.graph import END, START, StateGraph
from langgraph.pregel import Pregel
from langgraph.runtime import Runtime
from langgraph.types import RetryPolicy, interrupt
from lgos import status_event
from pydantic import BaseModel, Field

from lgos_demo_graphs.advanced import prompts
from lgos_demo_graphs.advanced.attachments import FileLimits, understand
from lgos_demo_graphs.advanced.context import AdvancedContext
from lgos_demo_graphs.advanced.knowledge import Knowledge, KnowledgeUnavailableError
from lgos_demo_graphs.advanced.receipts import Receipt, Receipts
from lgos_demo_graphs.advanced.services import Services
from lgos_demo_graphs.advanced.state import Decision, Intent, Note

QUESTION = "Save this note to shared knowledge? Approve, reject, or describe a change."
NOT_CONFIGURED = "Nothing was stored: shared knowledge is not configured for this deployment."
REJECTED = "Rejected: the note was not saved, and nothing was stored."
_SLUG = re.compile(r"[^a-z0-9]+")
SAVE_RETRY = RetryPolicy(max_attempts=3, initial_interval=0.5, retry_on=KnowledgeUnavailableError)
"""A save that hit a transport failure runs again; its receipt keeps it from uploading twice."""


class Draft(BaseModel):
    title: str = Field(description="A short title for the note.")
    markdown: str = Field(description="The complete note as Markdown, starting with its title.")


class NotebookState(TypedDict, total=False):
    intent: Intent
    request: str
    attached: list[str]
    findings: list[str]
    note: Note
    decision: Decision
    note_outcome: str
    reply: AIMessage


def note_markdown(draft: Draft) -> str:
    """The note as stored: one title heading, then a body that does not say the title again
    (a model may leave the heading out, or open the body with the bare title)."""
    title = draft.title.strip().lstrip("#").strip()
    lines = draft.markdown.strip().splitlines()
    if lines and lines[0].startswith("#"):
        title = lines[0].lstrip("#").strip() or title
        lines = lines[1:]
    while lines and (not lines[0].strip() or _same(lines[0], title)):
        lines = lines[1:]
    heading = f"# {title or 'Note'}"
    return "\n".join([heading, "", *lines]).rstrip() + "\n"


def _same(line: str, title: str) -> bool:
    def words(text: str) -> list[str]:
        return _SLUG.sub(" ", text.lower()).split()

    return bool(title) and words(line) == words(title)


def note_filename(title: str, note_id: str) -> str:
    slug = _SLUG.sub("-", title.lower()).strip("-")[:48].strip("-") or "note"
    return f"note-{slug}-{note_id[:8]}.md"


def finished(state: NotebookState, outcome: str) -> dict[str, Any]:
    """The note's fate; a save alone also ends the run with it as the reply."""
    update: dict[str, Any] = {"note_outcome": outcome}
    if state.get("intent") == "save":
        update["reply"] = AIMessage(outcome)
    return update


def saved_outcome(filename: str, file_id: str, status: str) -> str:
    where = f"Saved the approved note as {filename} (file id {file_id})"
    if status == "completed":
        return f"{where}; it is indexed, so later research can find it."
    if status == "in_progress":
        return f"{where}; indexing has not finished yet, so it may not be searchable yet."
    return f"{where}, but indexing failed: it is stored but not searchable."


async def upload_once(knowledge: Knowledge, receipts: Receipts, note: Note) -> str:
    """The file id of the approved bytes, uploading them only if no receipt proves an upload."""
    data = note["content"].encode()
    digest = hashlib.sha256(data).hexdigest()
    receipt = await receipts.get(note["note_id"])
    if receipt is not None and receipt["digest"] == digest:
        if receipt["file_id"] is not None:
            return receipt["file_id"]
        # An upload began and its result was lost: it may have reached the Files service.
        earlier = await knowledge.find_upload(note["filename"], digest)
        if earlier is not None:
            await receipts.put(
                note["note_id"], {**receipt, "file_id": earlier, "status": "uploaded"}
            )
            return earlier
    pending = Receipt(digest=digest, filename=note["filename"], file_id=None, status="uploading")
    await receipts.put(note["note_id"], pending)
    file_id = await knowledge.upload(note["filename"], data)
    await receipts.put(note["note_id"], {**pending, "file_id": file_id, "status": "uploaded"})
    return file_id


def build_notebook(services: Services) -> Pregel[Any, Any, Any, Any]:
    drafter = services.private_model.with_structured_output(
        Draft, method="json_schema"
    ).with_config(tags=["nostream"], run_name="draft_note")

    async def attached_text(state: NotebookState) -> str:
        """The attachments' text, read afresh on every draft (the checkpoint keeps ids only)."""
        limits = FileLimits.of(services.settings)
        texts = [
            (await understand(services.files, f, limits)).text for f in state.get("attached", [])
        ]
        return "".join(texts)

    async def draft(state: NotebookState) -> dict[str, Any]:
        if services.knowledge() is None:
            return finished(state, NOT_CONFIGURED)
        status_event("Drafting the note")
        note = state.get("note")
        revisions = note["revisions"] if note else []
        prompt: list[AnyMessage] = [SystemMessage(prompts.DRAFT)]
        if state.get("findings"):
            prompt.append(SystemMessage("Research findings:\n" + "\n".join(state["findings"])))
        prompt.append(HumanMessage(state.get("request", "") + await attached_text(state)))
        for index, feedback in enumerate(revisions):
            if note is not None and index == len(revisions) - 1:
                prompt.append(AIMessage(note["content"]))
            prompt.append(HumanMessage(feedback))
        result = Draft.model_validate(await drafter.ainvoke(prompt))
        note_id = note["note_id"] if note else uuid.uuid4().hex
        filename = note["filename"] if note else note_filename(result.title, note_id)
        content = note_markdown(result)
        return {
            "note": Note(note_id=note_id, filename=filename, content=content, revisions=revisions)
        }

    def after_draft(state: NotebookState) -> Literal["review", "__end__"]:
        return "__end__" if "note_outcome" in state else "review"

    def review(state: NotebookState) -> dict[str, Any]:
        note = state["note"]
        answer = interrupt(
            {
                "question": QUESTION,
                "filename": note["filename"],
                "content": note["content"],
                "choices": ["approve", "reject"],
                "allow_other": True,
            }
        )
        text = str(answer).strip()
        if text.lower() == "approve":
            return {"decision": "approve"}
        if text.lower() == "reject":
            return {"decision": "reject", **finished(state, REJECTED)}
        revisions = [*note["revisions"], text] if text else note["revisions"]
        return {"decision": "revise", "note": {**note, "revisions": revisions}}

    def after_review(state: NotebookState) -> Literal["draft", "save", "__end__"]:
        decision = state["decision"]
        if decision == "revise":
            return "draft"
        return "save" if decision == "approve" else "__end__"

    async def save(state: NotebookState, runtime: Runtime[AdvancedContext]) -> dict[str, Any]:
        knowledge = services.knowledge()
        if knowledge is None:
            return finished(state, NOT_CONFIGURED)
        if runtime.store is None:
            raise RuntimeError("advanced-graph needs a LangGraph Store for its note receipts")
        note = state["note"]
        receipts = Receipts(runtime.store)
        status_event("Saving the approved note")
        file_id = await upload_once(knowledge, receipts, note)
        status_event("Indexing the note")
        status = await knowledge.index(file_id, services.settings.knowledge_index_timeout)
        receipt = await receipts.get(note["note_id"])
        if receipt is not None:
            await receipts.put(note["note_id"], {**receipt, "status": status})
        return finished(state, saved_outcome(note["filename"], file_id, status))

    builder = StateGraph(NotebookState, context_schema=AdvancedContext)
    builder.add_node("draft", draft)
    builder.add_node("review", review)
    builder.add_node("save", save, retry_policy=SAVE_RETRY)
    builder.add_edge(START, "draft")
    builder.add_conditional_edges("draft", after_draft, ["review", END])
    builder.add_conditional_edges("review", after_review, ["draft", "save", END])
    builder.add_edge("save", END)
    return builder.compile(name="notebook")
