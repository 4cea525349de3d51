"""What the model is sent for an attached file: its text, its image, the PDF itself, or why it
was not read.

PDFs give their text (pypdf), or with ``pdf_input="file"`` go to the model as the PDF itself
(file input) when within the page limit; Markdown, CSV, JSON and plain text are read as text,
and PNG, JPEG, GIF and WebP images go to the model as image input (a data URL). Each attachment
is read within the byte, page and character limits of :class:`FileLimits`; a limit that leaves
part of a file unread becomes a notice the answer passes on, and a file that cannot be read at
all (too large, encrypted, damaged, an unknown binary) becomes one short bracketed line in its
place.
"""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import openai
from langchain_core.messages import BaseMessage, HumanMessage

from lgos_demo_graphs.advanced.file_types import (
    IMAGE_TYPES,
    decoded_text,
    image_type,
    kind_of,
    size_words,
)
from lgos_demo_graphs.advanced.knowledge import FileReader, StoredFile
from lgos_demo_graphs.advanced.pdf_text import UnreadablePDFError, pdf_text
from lgos_demo_graphs.advanced.settings import KnowledgeSettings


@dataclass(frozen=True, slots=True)
class FileLimits:
    max_bytes: int
    max_pages: int
    max_chars: int
    pdf_input: Literal["text", "file"] = "text"
    """``file``: a readable PDF within the page limit is sent as the PDF itself."""

    @classmethod
    def of(cls, settings: KnowledgeSettings, *, for_model: bool = False) -> FileLimits:
        """The limits; ``for_model`` also applies ``pdf_input`` (a note is drafted from text)."""
        return cls(
            settings.max_attachment_bytes,
            settings.max_attachment_pages,
            settings.max_attachment_chars,
            settings.pdf_input if for_model else "text",
        )


@dataclass(frozen=True, slots=True)
class Understood:
    """One attachment as the model is sent it."""

    blocks: list[dict[str, Any]]
    """Content blocks that take the ``input_file`` block's place."""
    notices: list[str] = field(default_factory=list)
    """What the user is told: a limit left part of the file unread."""

    @property
    def text(self) -> str:
        """The blocks' text alone (an image is only named): what a note is drafted from."""
        return "".join(b["text"] for b in self.blocks if b.get("type") == "text")


def _text_block(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def unread(name: str, why: str) -> Understood:
    return Understood([_text_block(f"\n\n[Attached file {name}: {why}.]\n")])


def _named(stored: StoredFile) -> str:
    return f"{stored.filename} ({stored.file_id})"


def _as_text(stored: StoredFile, text: str, notices: list[str]) -> Understood:
    block = _text_block(f"\n\nAttached file {_named(stored)}:\n{text}\n")
    return Understood([block], notices)


def read_text(stored: StoredFile, text: str, limits: FileLimits) -> Understood:
    if len(text) <= limits.max_chars:
        return _as_text(stored, text, [])
    notice = (
        f"Only the first {limits.max_chars} characters of {stored.filename} were read "
        f"(it has {len(text)}; the limit is {limits.max_chars})."
    )
    return _as_text(stored, text[: limits.max_chars], [notice])


async def read_pdf(stored: StoredFile, data: bytes, limits: FileLimits) -> Understood:
    try:
        # Parsing is CPU work on untrusted bytes: off the event loop that serves other runs.
        pdf = await asyncio.to_thread(pdf_text, data, limits.max_pages, limits.max_chars)
    except UnreadablePDFError as exc:
        return unread(_named(stored), f"a PDF, but {exc}")
    if limits.pdf_input == "file" and pdf.pages_total <= limits.max_pages:
        return read_pdf_file(stored, data, pdf.pages_total)
    if not pdf.text.strip():
        why = "a PDF without extractable text (its pages may be scanned images), nothing to read"
        return unread(_named(stored), why)
    notices = []
    if pdf.truncated:
        notices.append(
            f"Only the first {limits.max_chars} characters of {stored.filename} were read "
            f"(from its first {pdf.pages_read} of {pdf.pages_total} pages; the limit is "
            f"{limits.max_chars} characters)."
        )
    elif pdf.pages_read < pdf.pages_total:
        notices.append(
            f"Only the first {pdf.pages_read} pages of {stored.filename} were read "
            f"(it has {pdf.pages_total}; the limit is {limits.max_pages} pages)."
        )
    return _as_text(stored, pdf.text, notices)


def read_pdf_file(stored: StoredFile, data: bytes, pages: int) -> Understood:
    """The PDF itself as a file part (ChatOpenAI sends it as a Responses ``input_file``)."""
    marker = _text_block(f"\n\nAttached PDF {_named(stored)}: {pages} pages, sent as file input.\n")
    part = {
        "type": "file",
        "base64": base64.b64encode(data).decode("ascii"),
        "mime_type": "application/pdf",
        "filename": stored.filename,
    }
    return Understood([marker, part])


def read_image(stored: StoredFile, data: bytes, media_type: str) -> Understood:
    url = f"data:{media_type};base64,{base64.b64encode(data).decode('ascii')}"
    marker = _text_block(
        f"\n\nAttached image {_named(stored)}: a {IMAGE_TYPES[media_type]} image, "
        "sent as image input.\n"
    )
    return Understood([marker, {"type": "image_url", "image_url": {"url": url}}])


async def understand(files: FileReader, file_id: str, limits: FileLimits) -> Understood:
    """One attachment, read by what its bytes are."""
    try:
        stored = await files.read(file_id, limits.max_bytes)
    except openai.NotFoundError:
        return unread(file_id, "not found in the Files service")
    if stored.data is None:
        why = (
            f"{size_words(stored.size)}, larger than the {size_words(limits.max_bytes)} "
            "limit, so it was not read"
        )
        return Understood(
            unread(_named(stored), why).blocks,
            [f"{stored.filename} is larger than the {size_words(limits.max_bytes)} limit."],
        )
    data = stored.data
    kind = kind_of(data, stored.filename)
    if kind == "pdf":
        return await read_pdf(stored, data, limits)
    media_type = image_type(data)
    if kind == "image" and media_type is not None:
        return read_image(stored, data, media_type)
    text = decoded_text(data)
    if kind == "text" and text is not None:
        return read_text(stored, text, limits)
    why = f"{stored.size} bytes that are not text, a PDF or a PNG, JPEG, GIF or WebP image"
    return unread(_named(stored), why + ", not shown")


@dataclass(frozen=True, slots=True)
class Resolved:
    messages: list[BaseMessage]
    notices: list[str]
    """The latest request's notices (earlier turns' were passed on when they were answered)."""


async def resolve_attachments(
    messages: Sequence[BaseMessage], files: FileReader, limits: FileLimits
) -> Resolved:
    """The messages with each ``input_file`` block replaced by what the model is sent."""
    resolved: list[BaseMessage] = []
    notices: list[str] = []
    for message in messages:
        if isinstance(message, HumanMessage):
            notices = []
        if not isinstance(message, HumanMessage) or isinstance(message.content, str):
            resolved.append(message)
            continue
        blocks: list[Any] = []
        for block in message.content:
            if isinstance(block, dict) and block.get("type") == "file":
                understood = await understand(files, str(block["file_id"]), limits)
                blocks.extend(understood.blocks)
                notices.extend(understood.notices)
            else:
                blocks.append(block)
        resolved.append(message.model_copy(update={"content": blocks}))
    return Resolved(resolved, notices)
