"""A person attaches files in Open WebUI and gets answers from their content: a PDF's text, a PNG
described by its type and size, and a note of the PDF's key points saved after review.

Open WebUI sends an image for a vision model inline (a ``data:`` URL in the message); advanced-graph
reads attachments, so its model entry declares vision and the pipe uploads the image to the Files
service like any file. A private native stack (the real LiteLLM gateway, LGOS serving
advanced-graph on offline-model's readable answers, the Files service, SearXNG; Chainlit skipped)
and Debian's Chromium through Playwright. Screenshots: .dev/screenshots/files-open-webui/.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.support.browser import (
    LAUNCH_REVIEW,
    a_pdf_is_answered_from_its_text,
    a_pdfs_key_points_are_saved_then_found,
)
from tests.support.documents import pdf_bytes, png_bytes
from tests.support.ui_people import WEBUI_EMAIL, WEBUI_PASSWORD, WebUIUser

pytestmark = pytest.mark.socket
SCREENSHOTS = "files-open-webui"
UI_PORT = "OPEN_WEBUI_PORT"
STARTUP = (f"login {WEBUI_EMAIL} / {WEBUI_PASSWORD}",)
STACK_ENV = {"DEVSTACK_SKIP": "chainlit"}
PERSON = WebUIUser
GRAPH = "advanced-graph"


def attach_image(person: WebUIUser, path: Path) -> None:
    """Open WebUI shows an attached image as a thumbnail, not by its name."""
    images = person.page.locator("img").count()
    person.page.locator("input[type=file]").first.set_input_files(str(path))
    person.page.wait_for_function("n => document.images.length > n", arg=images, timeout=15_000)
    person.expect_no_text("not vision capable")
    person.page.wait_for_timeout(1500)  # Open WebUI stores the upload before the send
    person.shot("image attached")


def test_a_pdf_and_a_png_are_answered_from_their_content(person: WebUIUser, tmp_path: Path) -> None:
    report = tmp_path / "launch-review.pdf"
    report.write_bytes(pdf_bytes(LAUNCH_REVIEW))
    chart = tmp_path / "chart.png"
    chart.write_bytes(png_bytes(120, 80))

    a_pdf_is_answered_from_its_text(person, GRAPH, report)

    person.open(GRAPH)
    attach_image(person, chart)
    person.send("What is in this picture?")
    person.expect_text("a PNG image, 120x80 pixels", timeout=60)
    person.wait_idle()
    # Open WebUI sends no file name with an inline image: the pipe names it by its bytes.
    if not re.search(r"attached image image-\w{12}\.png \(file-\w+\)", person.transcript()):
        person.fail("the image named as the file the pipe uploaded")
    person.shot("the image described by type and size")


def test_a_note_of_a_pdfs_key_points_is_saved_after_review_and_found(
    person: WebUIUser, tmp_path: Path
) -> None:
    report = tmp_path / "launch-review.pdf"
    report.write_bytes(pdf_bytes(LAUNCH_REVIEW))
    a_pdfs_key_points_are_saved_then_found(person, GRAPH, report)
