"""What kind of file an attachment is, told by its first bytes (then by its name for text).

The bytes decide, not the name or the uploader's media type: a ``.png`` that is really a PDF is
read as a PDF, and nothing is sent to a model as an image unless its header says it is one.
"""

from __future__ import annotations

from typing import Literal

FileKind = Literal["pdf", "image", "text", "other"]

IMAGE_TYPES = {"image/png": "PNG", "image/jpeg": "JPEG", "image/gif": "GIF", "image/webp": "WebP"}
"""The image types a model is sent as image input, with the name the answer uses."""

TEXT_SUFFIXES = (".md", ".markdown", ".csv", ".json", ".txt", ".text")


def image_type(data: bytes) -> str | None:
    """The media type of a PNG, JPEG, GIF or WebP image, from its signature."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def is_pdf(data: bytes) -> bool:
    # The header may follow a little junk; readers accept it within the first KiB.
    return b"%PDF-" in data[:1024]


def decoded_text(data: bytes) -> str | None:
    """UTF-8 text (a byte-order mark dropped), or None when the bytes are not text."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return None
    # NUL never occurs in Markdown, CSV, JSON or plain text; it marks a binary format.
    return None if "\x00" in text else text


def kind_of(data: bytes, filename: str) -> FileKind:
    if is_pdf(data):
        return "pdf"
    if image_type(data) is not None:
        return "image"
    if decoded_text(data) is not None:
        return "text"
    return "other"


def size_words(size: int) -> str:
    """A byte count as a person reads it: ``10 MB``, ``512 KB``, ``900 bytes``."""
    for unit, scale in (("MB", 1024 * 1024), ("KB", 1024)):
        if size >= scale:
            return f"{size / scale:.1f}".removesuffix(".0") + f" {unit}"
    return f"{size} bytes"
