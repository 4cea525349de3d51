"""Client-supplied names and types, made harmless before they are stored or echoed back.

Storage keys are the service's own ids, so a filename can never choose where bytes land; the
name is still cleaned because clients show it and it travels in ``Content-Disposition``.
"""

from __future__ import annotations

import re
import unicodedata
from urllib.parse import quote

MAX_FILENAME_BYTES = 255
_TYPE = re.compile(r"^[a-z0-9][a-z0-9!#$&^_.+-]*/[a-z0-9][a-z0-9!#$&^_.+-]*$")
# Served as themselves; anything else (HTML, SVG, XML, scripts, unknown) is sent as opaque bytes so
# a browser never renders or runs it.
SAFE_TYPES = frozenset(
    {
        "text/plain",
        "text/markdown",
        "text/csv",
        "application/json",
        "application/pdf",
        "application/jsonl",
        "image/png",
        "image/jpeg",
        "image/gif",
        "image/webp",
    }
)
OPAQUE = "application/octet-stream"


def sanitize_filename(name: str | None) -> str:
    """The last path component, without control characters or leading dots, at most 255 bytes."""
    name = unicodedata.normalize("NFC", name or "")
    name = re.split(r"[/\\]", name)[-1]
    name = "".join(ch for ch in name if unicodedata.category(ch)[0] != "C")
    name = name.strip().lstrip(".").strip()
    encoded = name.encode()[:MAX_FILENAME_BYTES]
    name = encoded.decode(errors="ignore")
    return name or "file"


def stored_content_type(declared: str | None) -> str:
    value = (declared or "").split(";", 1)[0].strip().lower()
    return value if _TYPE.match(value) else OPAQUE


def served_content_type(stored: str) -> str:
    if stored not in SAFE_TYPES:
        return OPAQUE
    return f"{stored}; charset=utf-8" if stored.startswith("text/") else stored


def content_disposition(filename: str) -> str:
    """Always an attachment; an ASCII fallback plus the RFC 5987 UTF-8 name."""
    fallback = re.sub(r"[^A-Za-z0-9._ -]", "_", filename) or "file"
    return f"attachment; filename=\"{fallback}\"; filename*=UTF-8''{quote(filename, safe='')}"
