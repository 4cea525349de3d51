"""Text out of stored bytes. Only text formats are indexed; binary content is refused clearly."""

from __future__ import annotations


class UnsupportedFileError(Exception):
    pass


_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")


def extract_text(data: bytes) -> str:
    """UTF-8 (a BOM allowed) or UTF-16 with a BOM; anything holding a NUL is binary.

    PostgreSQL text cannot hold NUL, so one anywhere would fail the chunk insert later as a
    server error: it is refused here as what it is.
    """
    try:
        text = data.decode("utf-16") if data.startswith(_UTF16_BOMS) else data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise UnsupportedFileError("Only UTF-8 or UTF-16 text files can be indexed.") from error
    if "\x00" in text:
        raise UnsupportedFileError("Only text files can be indexed; this file is binary.")
    return text
