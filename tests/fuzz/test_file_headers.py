"""Hypothesis properties of reading user files: any bytes give an image description or none
(offline-model's header reader), and any bytes after a PDF header give text or one short
reason (advanced-graph's PDF reader), never an exception."""

from __future__ import annotations

import base64

from hypothesis import given, settings
from hypothesis import strategies as st
from lgos_demo_graphs.advanced.pdf_text import UnreadablePDFError, pdf_text
from offline_model.images import image_of, read_header

SIGNATURES = st.sampled_from(
    [b"", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", b"GIF89a", b"\xff\xd8\xff", b"RIFF\0\0\0\0WEBP"]
)


@given(SIGNATURES, st.binary(max_size=64))
def test_any_image_header_is_described_without_raising(signature: bytes, rest: bytes) -> None:
    image = read_header(signature + rest)
    assert image.describe()
    url = "data:image/png;base64," + base64.b64encode(signature + rest).decode()
    assert image_of(url) == image


@settings(max_examples=60, deadline=None)
@given(st.binary(max_size=400))
def test_any_pdf_bytes_give_text_or_a_short_reason(rest: bytes) -> None:
    try:
        read = pdf_text(b"%PDF-1.7\n" + rest, max_pages=3, max_chars=500)
    except UnreadablePDFError as exc:
        assert len(str(exc)) < 80
    else:
        assert len(read.text) <= 500 and read.pages_read <= 3
