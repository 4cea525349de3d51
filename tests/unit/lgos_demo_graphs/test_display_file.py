from __future__ import annotations

import struct
import zlib

from lgos_demo_graphs.display_file import CONFIG, HEIGHT, WIDTH, offered, png_chart


def test_the_chart_is_a_valid_png() -> None:
    data = png_chart([3, 5, 1])
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    _, kind = struct.unpack(">I4s", data[8:16])
    assert kind == b"IHDR" and struct.unpack(">II", data[16:24]) == (WIDTH, HEIGHT)
    idat_at = data.index(b"IDAT")
    (size,) = struct.unpack(">I", data[idat_at - 4 : idat_at])
    pixels = zlib.decompress(data[idat_at + 4 : idat_at + 4 + size])
    assert len(pixels) == HEIGHT * (1 + WIDTH * 3)
    assert png_chart([]) != b""


def test_the_graph_declares_display_file_and_calls_it_only_when_offered() -> None:
    assert list(CONFIG.client_tools) == ["display_file"]
    assert offered([{"type": "function", "name": "display_file"}])
    assert not offered([{"type": "function", "name": "other"}])
