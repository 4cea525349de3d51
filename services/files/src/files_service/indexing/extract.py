"""Text out of stored bytes. Only text formats are indexed; binary content is refused clearly."""

from __future__ import annotations


class UnsupportedFileError(Exception):
    pass


def extract_text(data: bytes) -> str:
    if b"\x00" in data[:8192]:
        raise UnsupportedFileError("Only text files (UTF-8) can be indexed; this file is binary.")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise UnsupportedFileError("Only UTF-8 text files can be indexed.") from error
