"""Filename sanitizing and the content types a download is served with."""

from __future__ import annotations

import pytest
from files_service.filenames import (
    content_disposition,
    sanitize_filename,
    served_content_type,
    stored_content_type,
)


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("../../etc/passwd", "passwd"),
        ("..\\..\\boot.ini", "boot.ini"),
        ("a\x00b\r\nc.txt", "abc.txt"),
        ("...", "file"),
        ("", "file"),
        (None, "file"),
        ("  .env  ", "env"),
        ("dir/", "file"),
        ("é" * 200, "é" * 127),  # cut at 255 bytes without splitting a character
    ],
)
def test_sanitize_filename(raw: str | None, clean: str) -> None:
    assert sanitize_filename(raw) == clean


def test_content_types() -> None:
    assert stored_content_type("text/plain; charset=latin-1") == "text/plain"
    assert stored_content_type("not a type") == "application/octet-stream"
    assert stored_content_type(None) == "application/octet-stream"
    assert served_content_type("text/plain") == "text/plain; charset=utf-8"
    assert served_content_type("application/pdf") == "application/pdf"
    for risky in ("text/html", "image/svg+xml", "application/xhtml+xml", "text/javascript"):
        assert served_content_type(risky) == "application/octet-stream"


def test_content_disposition_is_always_an_attachment() -> None:
    value = content_disposition('we"ird;name.txt')
    assert value.startswith("attachment; ")
    assert 'filename="we_ird_name.txt"' in value
    assert "filename*=UTF-8''we%22ird%3Bname.txt" in value
