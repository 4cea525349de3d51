"""What a file part carrying its bytes holds (a Responses ``input_file`` or a Chat ``file``
part with ``file_data``): its name, kind and size, never its content.

The stand-in reads no PDF; it says what it was sent, so a caller can see that a file reached
the model as file input.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any


def file_data_part(part: dict[str, Any]) -> dict[str, Any] | None:
    """The part's file fields when it carries ``file_data`` (Responses or Chat shape)."""
    if part.get("type") == "input_file":
        file: Any = part
    elif part.get("type") == "file":
        file = part.get("file")
    else:
        return None
    if isinstance(file, dict) and isinstance(file.get("file_data"), str):
        return file
    return None


def describe_file(file: dict[str, Any]) -> str:
    """``a PDF file NAME of N bytes``, from the decoded ``file_data``."""
    name = file.get("filename") if isinstance(file.get("filename"), str) else "without a name"
    header, comma, payload = str(file["file_data"]).partition(",")
    if not comma or not header.endswith(";base64"):
        return f"a file {name} whose data is not a base64 data URL"
    try:
        data = base64.b64decode(payload, validate=True)
    except (binascii.Error, ValueError):
        return f"a file {name} whose data I could not decode"
    kind = "PDF file" if data[:1024].find(b"%PDF-") >= 0 else "file"
    return f"a {kind} {name} of {len(data)} bytes"
