"""advanced-graph's reading of attachments: PDFs as text within page and character limits,
text files as text, images as image input, and a short reason for every file it cannot read."""

from __future__ import annotations

import base64

import httpx
import openai
import pytest
from langchain_core.messages import AIMessage, HumanMessage
from lgos_demo_graphs.advanced.attachments import FileLimits, resolve_attachments, understand
from lgos_demo_graphs.advanced.knowledge import StoredFile
from lgos_demo_graphs.advanced.settings import KnowledgeSettings
from pydantic import ValidationError

from tests.support.documents import BROKEN_PDF, pdf_bytes, png_bytes

LIMITS = FileLimits(max_bytes=64 * 1024, max_pages=2, max_chars=400)


class Stored:
    """The Files service as the graph's FileReader sees it: a dict of (name, bytes)."""

    def __init__(self, **files: tuple[str, bytes]) -> None:
        self.files = files
        self.fetched: list[str] = []

    async def read(self, file_id: str, max_bytes: int) -> StoredFile:
        if file_id not in self.files:
            request = httpx.Request("GET", f"http://files/v1/files/{file_id}")
            response = httpx.Response(404, request=request)
            raise openai.NotFoundError("no such file", response=response, body=None)
        name, data = self.files[file_id]
        if len(data) > max_bytes:
            return StoredFile(file_id, name, len(data), None)
        self.fetched.append(file_id)
        return StoredFile(file_id, name, len(data), data)


async def read(name: str, data: bytes, limits: FileLimits = LIMITS) -> tuple[str, list[str]]:
    understood = await understand(Stored(**{"file-1": (name, data)}), "file-1", limits)
    return understood.text, understood.notices


@pytest.mark.parametrize(
    ("name", "data"),
    [
        ("notes.md", b"# Plan\n\n- ship MARKDOWN_OK on Friday\n"),
        ("table.csv", b"name,status\nCSV_OK,green\n"),
        ("data.json", b'{"marker": "JSON_OK"}'),
        ("readme.txt", "plain TEXT_OK, naïve café".encode()),
        ("no-suffix", b"\xef\xbb\xbfBOM_TEXT_OK"),
    ],
)
async def test_text_files_are_read_as_text_under_their_name(name: str, data: bytes) -> None:
    text, notices = await read(name, data)
    assert text.startswith(f"\n\nAttached file {name} (file-1):\n")
    assert data.decode("utf-8-sig") in text
    assert notices == []


async def test_a_long_text_file_is_cut_at_the_character_limit_and_the_user_is_told() -> None:
    text, notices = await read("long.md", b"x" * 1000)
    assert text.count("x") == 400
    assert notices == [
        "Only the first 400 characters of long.md were read (it has 1000; the limit is 400)."
    ]


async def test_a_pdf_gives_its_text_page_by_page() -> None:
    pdf = pdf_bytes(["Quarterly report (draft)\nRevenue grew 12 percent.", "Costs fell."])
    text, notices = await read("report.pdf", pdf)
    assert text == (
        "\n\nAttached file report.pdf (file-1):\n"
        "Quarterly report (draft)\nRevenue grew 12 percent.\n\nCosts fell.\n"
    )
    assert notices == []


async def test_pages_past_the_page_limit_are_not_read_and_the_user_is_told() -> None:
    pdf = pdf_bytes(["PAGE_ONE", "PAGE_TWO", "PAGE_THREE", "PAGE_FOUR"])
    text, notices = await read("report.pdf", pdf)
    assert "PAGE_TWO" in text and "PAGE_THREE" not in text
    assert notices == [
        "Only the first 2 pages of report.pdf were read (it has 4; the limit is 2 pages)."
    ]


async def test_a_pdf_over_the_character_limit_says_so_with_its_pages() -> None:
    pdf = pdf_bytes(["A" * 300, "B" * 300, "C" * 300])
    text, notices = await read("wide.pdf", pdf)
    assert "C" not in text.split(":\n", 1)[1]
    assert len(text.split(":\n", 1)[1].strip()) == 400
    assert notices == [
        "Only the first 400 characters of wide.pdf were read (from its first 2 of 3 pages; "
        "the limit is 400 characters)."
    ]


async def test_a_file_over_the_byte_limit_is_named_not_fetched() -> None:
    files = Stored(**{"file-big": ("report.pdf", b"%PDF-" + b"0" * (2 * 1024 * 1024))})
    limits = FileLimits(max_bytes=1024 * 1024, max_pages=2, max_chars=400)
    understood = await understand(files, "file-big", limits)
    assert files.fetched == []
    assert understood.text == (
        "\n\n[Attached file report.pdf (file-big): 2 MB, larger than the 1 MB limit, "
        "so it was not read.]\n"
    )
    assert understood.notices == ["report.pdf is larger than the 1 MB limit."]


@pytest.mark.parametrize(
    ("data", "why"),
    [
        (pdf_bytes(["SECRET_TEXT"], password="s3cret"), "it is encrypted with a password"),
        (BROKEN_PDF, "it is damaged or not a valid PDF"),
        (b"%PDF-1.7\n" + bytes(range(256)) * 4, "it is damaged or not a valid PDF"),
        (pdf_bytes([""]), "a PDF without extractable text"),
    ],
)
async def test_a_pdf_that_cannot_be_read_gives_one_short_reason(data: bytes, why: str) -> None:
    text, notices = await read("locked.pdf", data)
    assert text.startswith("\n\n[Attached file locked.pdf (file-1): ")
    assert why in text
    assert "SECRET_TEXT" not in text and "Traceback" not in text
    assert len(text) < 200 and notices == []


async def test_a_pdf_encrypted_without_a_password_is_read() -> None:
    text, _ = await read("open.pdf", pdf_bytes(["OPEN_TEXT"], password=""))
    assert "OPEN_TEXT" in text


async def test_an_image_goes_to_the_model_as_a_data_url_named_by_a_text_line() -> None:
    png = png_bytes(3, 2)
    understood = await understand(Stored(**{"file-i": ("chart.jpg", png)}), "file-i", LIMITS)
    marker, image = understood.blocks
    assert marker["text"] == (
        "\n\nAttached image chart.jpg (file-i): a PNG image, sent as image input.\n"
    )
    url = image["image_url"]["url"]
    assert image["type"] == "image_url"
    assert url == "data:image/png;base64," + base64.b64encode(png).decode()  # the bytes decide


async def test_unknown_binaries_and_missing_files_are_named_not_shown() -> None:
    text, _ = await read("blob.bin", b"\x00\x01\x02\xff" * 10)
    assert text == (
        "\n\n[Attached file blob.bin (file-1): 40 bytes that are not text, a PDF or a PNG, "
        "JPEG, GIF or WebP image, not shown.]\n"
    )
    missing = await understand(Stored(), "file-gone", LIMITS)
    assert missing.text == "\n\n[Attached file file-gone: not found in the Files service.]\n"


async def test_only_the_latest_requests_limits_are_passed_on() -> None:
    files = Stored(**{"file-a": ("a.md", b"a" * 500), "file-b": ("b.md", b"short")})
    earlier = HumanMessage([{"type": "text", "text": "A"}, {"type": "file", "file_id": "file-a"}])
    latest = HumanMessage([{"type": "text", "text": "B"}, {"type": "file", "file_id": "file-b"}])
    resolved = await resolve_attachments([earlier, AIMessage("ok"), latest], files, LIMITS)
    assert resolved.notices == []
    assert "a" * 400 in resolved.messages[0].content[1]["text"]  # type: ignore[index]
    again = await resolve_attachments([latest, AIMessage("ok"), earlier], files, LIMITS)
    assert [n.split(" were read")[0] for n in again.notices] == [
        "Only the first 400 characters of a.md"
    ]


def test_limits_come_from_settings_with_sensible_defaults_and_are_validated() -> None:
    limits = FileLimits.of(KnowledgeSettings())
    assert limits == FileLimits(max_bytes=10 * 1024 * 1024, max_pages=30, max_chars=20_000)
    for field, bad in (
        ("max_attachment_pages", 0),
        ("max_attachment_bytes", -1),
        ("max_attachment_chars", 0),
        ("max_attachment_bytes", 10**12),
    ):
        with pytest.raises(ValidationError):
            KnowledgeSettings(**{field: bad})


def test_pdf_input_is_text_unless_set_to_file_and_rejects_other_values(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert KnowledgeSettings().pdf_input == "text"
    monkeypatch.setenv("DEMO_API_PDF_INPUT", "file")
    settings = KnowledgeSettings()
    assert settings.pdf_input == "file"
    assert FileLimits.of(settings, for_model=True).pdf_input == "file"
    assert FileLimits.of(settings).pdf_input == "text"  # a note is still drafted from text
    monkeypatch.setenv("DEMO_API_PDF_INPUT", "pdf")
    with pytest.raises(ValidationError, match="pdf_input"):
        KnowledgeSettings()


FILE_LIMITS = FileLimits(max_bytes=64 * 1024, max_pages=2, max_chars=400, pdf_input="file")


async def test_pdf_input_file_sends_the_pdf_itself_within_the_page_limit() -> None:
    data = pdf_bytes(["FILE_INPUT_MARKER page one", "page two"])
    understood = await understand(Stored(**{"file-1": ("r.pdf", data)}), "file-1", FILE_LIMITS)
    marker, part = understood.blocks
    assert marker["text"] == "\n\nAttached PDF r.pdf (file-1): 2 pages, sent as file input.\n"
    assert part == {
        "type": "file",
        "base64": base64.b64encode(data).decode(),
        "mime_type": "application/pdf",
        "filename": "r.pdf",
    }
    assert "FILE_INPUT_MARKER" not in understood.text
    assert understood.notices == []


async def test_pdf_input_file_falls_back_to_text_past_the_page_limit_or_when_unreadable() -> None:
    text, notices = await read("long.pdf", pdf_bytes(["ONE", "TWO", "THREE"]), FILE_LIMITS)
    assert "ONE" in text and "THREE" not in text
    assert notices == [
        "Only the first 2 pages of long.pdf were read (it has 3; the limit is 2 pages)."
    ]
    text, _ = await read("bad.pdf", BROKEN_PDF, FILE_LIMITS)
    assert text.startswith("\n\n[Attached file bad.pdf (file-1): a PDF, but it is damaged")
