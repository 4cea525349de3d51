"""What an image part of a request holds: its type and pixel size, read from header bytes.

The stand-in has no vision; it reports what it was sent, so a caller can see that an image
reached the model. Only data URLs are read (a remote URL is never fetched).
"""

from __future__ import annotations

import base64
import binascii
import struct
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Image:
    kind: str | None
    """``PNG``, ``JPEG``, ``GIF`` or ``WebP``; None when the bytes are none of them."""
    width: int = 0
    height: int = 0
    url: str | None = None
    """A remote image's URL (not fetched)."""

    def describe(self) -> str:
        if self.url is not None:
            return f"an image at {self.url} (not fetched)"
        if self.kind is None:
            return "image data I could not decode"
        if not self.width or not self.height:
            return f"a {self.kind} image whose size I could not read"
        return f"a {self.kind} image, {self.width}x{self.height} pixels"


def image_of(url: str) -> Image:
    """The image a part's URL carries: a ``data:`` URL is decoded and its header read."""
    if not url.startswith("data:"):
        return Image(None, url=url[:200])
    header, comma, payload = url.partition(",")
    if not comma or not header.endswith(";base64"):
        return Image(None)
    try:
        data = base64.b64decode(payload, validate=True)
    except (binascii.Error, ValueError):
        return Image(None)
    return read_header(data)


def read_header(data: bytes) -> Image:
    if data.startswith(b"\x89PNG\r\n\x1a\n") and data[12:16] == b"IHDR" and len(data) >= 24:
        width, height = struct.unpack(">II", data[16:24])
        return Image("PNG", width, height)
    if data.startswith((b"GIF87a", b"GIF89a")) and len(data) >= 10:
        width, height = struct.unpack("<HH", data[6:10])
        return Image("GIF", width, height)
    if data.startswith(b"\xff\xd8\xff"):
        return _jpeg(data)
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return _webp(data)
    return Image(None)


_SOF = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}
"""Start-of-frame markers (not DHT, JPG, DAC): the segment holding the frame's size."""


def _jpeg(data: bytes) -> Image:
    at = 2
    while at + 4 <= len(data):
        if data[at] != 0xFF:
            break
        marker = data[at + 1]
        if marker == 0xFF:  # fill byte
            at += 1
            continue
        (length,) = struct.unpack(">H", data[at + 2 : at + 4])
        if marker in _SOF and at + 9 <= len(data):
            height, width = struct.unpack(">HH", data[at + 5 : at + 9])
            return Image("JPEG", width, height)
        at += 2 + length
    return Image("JPEG")


def _webp(data: bytes) -> Image:
    chunk = data[12:16]
    if chunk == b"VP8 " and len(data) >= 30:
        width, height = struct.unpack("<HH", data[26:30])
        return Image("WebP", width & 0x3FFF, height & 0x3FFF)
    if chunk == b"VP8L" and len(data) >= 25:
        (bits,) = struct.unpack("<I", data[21:25])
        return Image("WebP", (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1)
    if chunk == b"VP8X" and len(data) >= 30:
        width = int.from_bytes(data[24:27], "little") + 1
        height = int.from_bytes(data[27:30], "little") + 1
        return Image("WebP", width, height)
    return Image("WebP")
