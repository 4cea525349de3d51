"""Which stored bytes count as indexable text."""

from __future__ import annotations

import pytest
from files_service.indexing.extract import UnsupportedFileError, extract_text


def test_utf8_with_or_without_a_bom() -> None:
    assert extract_text("naïve café".encode()) == "naïve café"
    assert extract_text(b"\xef\xbb\xbfhello") == "hello"


def test_utf16_with_a_bom() -> None:
    assert extract_text("naïve café".encode("utf-16")) == "naïve café"
    assert extract_text(b"\xfe\xff" + "ok".encode("utf-16-be")) == "ok"


@pytest.mark.parametrize(
    "data",
    [
        b"\x00\x01\x02" * 100,
        b"a " * 5000 + b"\x00",  # a NUL past the first block still makes it binary
        b"\xff\xfe\x00\xd8",  # UTF-16 with a lone surrogate
        b"caf\xe9",  # Latin-1, not UTF-8
    ],
)
def test_binary_or_undecodable_is_unsupported(data: bytes) -> None:
    with pytest.raises(UnsupportedFileError):
        extract_text(data)
