"""A person attaches files in Chainlit and gets answers from their content: a PDF's text, a PNG
described by its type and size, and a note of the PDF's key points saved after review.

A private native stack (the real LiteLLM gateway, LGOS serving advanced-graph on offline-model's
readable answers, the Files service, SearXNG; Open WebUI skipped) and Debian's Chromium through
Playwright. Screenshots: .dev/screenshots/files/.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser

from tests.support.browser import screenshot_dir
from tests.support.devstack import detached_stack, pg_data_dir
from tests.support.documents import pdf_bytes, png_bytes
from tests.support.ui_people import ChainlitUser, signed_in

pytestmark = pytest.mark.socket
SCREENSHOTS = "files"
REPORT = [
    "Launch review\nThe launch moves to Friday behind the ORCHID_FLAG switch.",
    "Support is staffed all weekend.",
]


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    with (
        pg_data_dir() as pg_data,
        detached_stack(tmp_path_factory.mktemp("files-stack"), pg_data) as (env, _),
    ):
        yield env


def attach_image(person: ChainlitUser, path: Path) -> None:
    """Chainlit previews an attached image as a thumbnail, not by its name."""
    images = person.page.locator("img").count()
    person.page.set_input_files("#upload-button-input", str(path))
    person.page.wait_for_function("n => document.images.length > n", arg=images, timeout=15_000)
    person.shot("image attached")


def test_a_person_attaches_a_pdf_and_a_png_and_gets_answers_from_them(
    browser: Browser, stack: dict[str, str], tmp_path: Path
) -> None:
    report = tmp_path / "launch-review.pdf"
    report.write_bytes(pdf_bytes(REPORT))
    chart = tmp_path / "chart.png"
    chart.write_bytes(png_bytes(120, 80))
    shots = screenshot_dir(SCREENSHOTS)
    with signed_in(browser, stack, ChainlitUser, shots, "chainlit") as person:
        person.open("advanced-graph")
        person.attach(report)
        person.send("What are the key points of the attached file?")
        person.expect_text("I read the attached file launch-review.pdf", timeout=60)
        person.expect_text("ORCHID_FLAG")
        person.wait_idle()
        person.shot("answered from the PDF's text")

        person.new_chat()
        person.open("advanced-graph")
        attach_image(person, chart)
        person.send("What is in this picture?")
        person.expect_text("a PNG image, 120x80 pixels", timeout=60)
        person.wait_idle()
        person.shot("the image described by type and size")

        person.new_chat()
        person.open("advanced-graph")
        person.attach(report)
        person.send("Save the key points of this file as a note.")
        person.review_shown(timeout=60)
        person.expect_text("Key points of launch-review.pdf")
        person.shot("a note of the PDF's key points under review")
        person.choose("approve")
        person.expect_text("Saved the approved note as note-key-points-of-launch-review", 90)
        person.wait_idle(timeout=90)
        person.shot("the note saved after approval")

        person.new_chat()
        person.open("advanced-graph")
        person.send("Search my notes: when does the ORCHID_FLAG launch happen?")
        person.expect_text("[K1] note-key-points-of-launch-review", timeout=60)
        person.expect_text("behind the ORCHID_FLAG switch")  # the note's own text, quoted
        person.wait_idle()
        person.shot("the saved note found")
