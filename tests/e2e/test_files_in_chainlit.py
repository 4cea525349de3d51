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

from tests.support.browser import (
    LAUNCH_REVIEW,
    a_pdf_is_answered_from_its_text,
    a_pdfs_key_points_are_saved_then_found,
    screenshot_dir,
)
from tests.support.devstack import detached_stack, pg_data_dir
from tests.support.documents import pdf_bytes, png_bytes
from tests.support.ui_people import ChainlitUser, signed_in

pytestmark = pytest.mark.socket
SCREENSHOTS = "files"
GRAPH = "advanced-graph"


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    with (
        pg_data_dir() as pg_data,
        detached_stack(tmp_path_factory.mktemp("files-stack"), pg_data) as (env, _),
    ):
        yield env


def test_a_person_attaches_a_pdf_and_a_png_and_gets_answers_from_them(
    browser: Browser, stack: dict[str, str], tmp_path: Path
) -> None:
    report = tmp_path / "launch-review.pdf"
    report.write_bytes(pdf_bytes(LAUNCH_REVIEW))
    chart = tmp_path / "chart.png"
    chart.write_bytes(png_bytes(120, 80))
    shots = screenshot_dir(SCREENSHOTS)
    with signed_in(browser, stack, ChainlitUser, shots, "chainlit") as person:
        a_pdf_is_answered_from_its_text(person, GRAPH, report)

        person.new_chat()
        person.open(GRAPH)
        person.attach(chart, image=True)
        person.send("What is in this picture?")
        person.expect_text("a PNG image, 120x80 pixels", timeout=60)
        person.wait_idle()
        person.shot("the image described by type and size")

        a_pdfs_key_points_are_saved_then_found(person, GRAPH, report)
