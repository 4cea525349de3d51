"""Playwright driving Debian's Chromium (no browser download), as a person would use a page.

Every step saves a numbered screenshot; a failed expectation saves one more and fails with the
page's visible text, so a red test says what a person would have seen.

Each UI's person (Chainlit, Open WebUI) knows its own page: how to open a graph, send, attach,
answer a review. The journeys both UIs share are written once below on top of those steps.
"""

from __future__ import annotations

import re
import shutil
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import httpx
import pytest
from playwright.sync_api import Browser, Locator, Page, sync_playwright

from tests.support.devstack import files_service
from tests.support.servers import ROOT

CHROMIUM = Path("/usr/bin/chromium")
SCREENSHOTS = ROOT / ".dev" / "screenshots"


@contextmanager
def chromium(executable: Path = CHROMIUM) -> Iterator[Browser]:
    """Debian's Chromium, or ``executable`` (a wrapper that starts it somewhere else)."""
    if not CHROMIUM.exists():
        pytest.fail(
            "Debian's chromium is missing: `make test` installs it (apt-get install chromium)"
        )
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(executable), args=["--no-sandbox", "--disable-dev-shm-usage"]
        )
        try:
            yield browser
        finally:
            browser.close()


def screenshot_dir(name: str) -> Path:
    folder = SCREENSHOTS / name
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    return folder


def journey_name(request: pytest.FixtureRequest) -> str:
    """A test's name as a screenshot prefix (parametrized ids included, no brackets)."""
    return re.sub(r"[^\w-]+", "-", request.node.name.removeprefix("test_")).strip("-")


class Person:
    """One browser page, its screenshots, and expectations that fail with the page's text."""

    def __init__(self, page: Page, folder: Path, journey: str, base_url: str = "") -> None:
        self.page = page
        self.folder = folder
        self.journey = journey
        self.base_url = base_url
        self.step = 0

    def login(self) -> None:
        """Sign in through the UI's own form (each UI's person knows its form)."""
        raise NotImplementedError

    def settle(self) -> None:
        """Wait until a freshly opened page is ready for input."""

    def new_chat(self) -> None:
        """Leave the current chat for a fresh one."""
        self.page.goto(self.base_url)
        self.settle()

    # -- what each UI's person does on its own page -----------------------------------------------

    def open(self, graph: str) -> None:
        """Start a chat with ``graph``."""
        raise NotImplementedError

    def send(self, text: str) -> None:
        raise NotImplementedError

    def wait_idle(self, timeout: float = 90.0) -> None:
        """Wait until the turn is over."""
        raise NotImplementedError

    def attach(self, path: Path) -> None:
        """Attach a file to the next message."""
        raise NotImplementedError

    def choose(self, choice: str) -> None:
        """Answer the pending review with one of its choices (``approve``, ``reject``)."""
        raise NotImplementedError

    def revise(self, feedback: str) -> None:
        """Answer the pending review with revision feedback."""
        raise NotImplementedError

    def review_shown(self, timeout: float = 30.0) -> None:
        """Wait until a review is asked."""
        self.expect_text("Review requested", timeout)

    def draft_shown(self) -> None:
        """Check how a note's draft is rendered in its review (nothing more by default)."""

    def transcript(self) -> str:
        """The conversation's visible text."""
        return self.text()

    # -- steps both UIs share ---------------------------------------------------------------------

    def ask(self, text: str, expect: str, timeout: float = 30.0) -> None:
        """Send a message, see ``expect`` appear, wait for the turn to end."""
        self.send(text)
        self.expect_text(expect, timeout)
        self.wait_idle()

    def send_file(self, graph: str, path: Path, text: str = "Summarize this file.") -> None:
        """A chat with ``graph`` whose first message carries ``path`` (holding :data:`MARKER`)."""
        path.write_text(MARKER)
        self.open(graph)
        self.attach(path)
        self.send(text)

    def shot(self, what: str) -> Path:
        self.step += 1
        slug = re.sub(r"[^a-z0-9]+", "-", what.lower()).strip("-")
        path = self.folder / f"{self.journey}-{self.step:02d}-{slug}.png"
        self.page.screenshot(path=str(path), full_page=True)
        return path

    def text(self) -> str:
        return self.page.inner_text("body")

    def fail(self, expectation: str) -> None:
        path = self.shot(f"FAILED {expectation}")
        pytest.fail(
            f"{self.journey}: expected {expectation}\nscreenshot: {path}\npage text:\n{self.text()}"
        )

    def expect_text(self, text: str, timeout: float = 30.0, *, count: int = 1) -> None:
        """Wait until ``text`` appears ``count`` times in the page's visible text."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.text().count(text) >= count:
                return
            self.page.wait_for_timeout(200)
        self.fail(f"the text {text!r}" + (f" {count} times" if count > 1 else ""))

    def expect_no_text(self, text: str) -> None:
        if text in self.text():
            self.fail(f"no {text!r} on the page")

    def expect_image(self, selector: str, width: int, what: str) -> Locator:
        """Wait for the last image ``selector`` finds to show, loaded at ``width`` pixels."""
        image = self.page.locator(selector).last
        try:
            image.wait_for(state="visible", timeout=15_000)
        except Exception:
            self.fail(what)
        assert self.page.evaluate("img => img.naturalWidth", image.element_handle()) == width
        return image

    def expect_visible(self, selector: str, timeout: float = 30.0) -> None:
        try:
            self.page.wait_for_selector(selector, state="visible", timeout=timeout * 1000)
        except Exception:
            self.fail(f"a visible {selector}")


P = TypeVar("P", bound=Person)
MARKER = "The project marker is FILE_INPUT_OK."
CHART_WIDTH = 240
"""display-file's chart, in pixels."""
NOTE_FILE = re.compile(r"note-[a-z0-9-]+-[0-9a-f]{8}\.md")
"""advanced-graph's note files: ``note-<slug>-<8 hex>.md``."""


@contextmanager
def browser_user(
    browser: Browser,
    kind: type[P],
    base_url: str,
    shots: Path,
    journey: str,
    state: Path | None = None,
) -> Iterator[P]:
    """A person in a fresh browser context, signed in when ``state`` (a saved session) is given."""
    context = browser.new_context(
        viewport={"width": 1280, "height": 900},
        storage_state=str(state) if state is not None else None,
    )
    try:
        yield kind(context.new_page(), shots, journey, base_url)
    finally:
        context.close()


@dataclass(frozen=True)
class BrowserUI:
    """One UI under test: the browser, the person who uses it, its URL, its screenshot folder."""

    browser: Browser
    kind: type[Person]
    url: str
    shots: Path

    def user(self, journey: str, state: Path | None = None) -> AbstractContextManager[Person]:
        return browser_user(self.browser, self.kind, self.url, self.shots, journey, state)


# -- journeys both UIs share ----------------------------------------------------------------------


def file_reaches_the_graph(person: Person, stack: dict[str, str], folder: Path) -> None:
    """An attachment goes to the Files service through the gateway; the graph gets its id."""
    person.send_file("simple-graph", folder / "brief.txt")
    person.expect_text("Files: file-")
    person.wait_idle()
    person.shot("answer names the file")
    file_id = re.search(r"Files: (file-[A-Za-z0-9]+)", person.transcript())
    assert file_id, person.transcript()
    with files_service(stack) as files:
        meta = files.get(f"/files/{file_id.group(1)}").json()
        content = files.get(f"/files/{file_id.group(1)}/content").content
    assert meta["purpose"] == "user_data" and meta["filename"] == "brief.txt"
    assert content == MARKER.encode()


def decide_on_a_change(person: Person, request: str, choice: str, outcome: str) -> None:
    """interruptible-approval asks to review ``request``; ``choice`` leads to ``outcome``."""
    person.open("interruptible-approval")
    person.send(request)
    person.review_shown()
    person.expect_text(f"Approve this change? Proposed change: {request}")
    person.shot("review")
    person.choose(choice)
    person.expect_text(outcome)
    person.wait_idle()
    person.shot(f"{choice} chosen")


def feedback_then_approve(person: Person) -> None:
    """A typed message answers the pending change review as feedback: the graph asks again with
    the revision, and approving it applies the change."""
    person.send("Mention the migration first")
    person.expect_text("(revised: Mention the migration first)")
    person.expect_text("Review requested", count=2)
    person.review_shown()
    person.shot("second review shows the feedback")
    person.choose("approve")
    person.expect_text("Decision: approved.")
    person.expect_text("Revisions requested: 1.")
    person.wait_idle()
    person.shot("approved after revision")


def mcp_answer(person: Person, graph: str, message: str, tool: str) -> None:
    """offline-model calls the MCP tool the message spells out, with the message as argument."""
    person.open(graph)
    person.send(message)
    person.expect_text("Tool outputs:")
    person.wait_idle()
    person.expect_text(tool)
    person.expect_text("legacy-portal")
    person.shot("mcp call and answer")


def searxng_urls(stack: dict[str, str], question: str) -> set[str]:
    returned = httpx.get(
        f"http://127.0.0.1:{stack['SEARXNG_PORT']}/search",
        params={"q": question, "format": "json"},
        timeout=10.0,
    ).json()
    return {result["url"] for result in returned["results"]}


def follow_source(person: Person, link: Locator, href: str) -> None:
    """No internet here: the click is answered locally, which proves where it leads."""
    person.page.context.route(href, lambda route: route.fulfill(body="cited page"))
    with person.page.context.expect_page() as opened:
        link.click()
    opened.value.wait_for_load_state()
    assert opened.value.url == href and "cited page" in opened.value.inner_text("body")


def chart_is_shown(person: Person, image: str) -> Locator:
    """display-file's chart, downloaded through the gateway, shown inline (``image`` selects it)."""
    person.open("display-file")
    person.send("chart these few words please")
    person.expect_text("word-lengths.png", timeout=60)
    person.expect_text("The chart is shown above.")
    person.wait_idle()
    chart = person.expect_image(image, CHART_WIDTH, "the chart image inline")
    person.shot("chart shown")
    return chart


def note_review(person: Person, note: str) -> str:
    """Ask advanced-graph to save a note: the review shows the draft and the file's name."""
    person.open("advanced-graph")
    person.send(f"Remember this exact note: {note}")
    person.review_shown(timeout=60)
    person.expect_text(note)  # the request
    person.expect_text(note[0].upper() + note[1:])  # the rendered draft, the note as a sentence
    found = NOTE_FILE.search(person.transcript())
    if not found:
        person.fail("the review naming the file it will store (note-<slug>-<8hex>.md)")
    assert found is not None
    person.draft_shown()
    return found.group(0)


Notes = Callable[[], set[str]]
"""What the stack stores for notes (the journeys compare it before and after)."""


def save_a_note(person: Person, notes: Notes) -> tuple[str, set[str]]:
    """Approve a note: nothing is stored before the approval; returns its file and the notes
    from before."""
    before = notes()
    filename = note_review(person, "retries need idempotency keys.")
    person.shot("note review with the draft")
    assert notes() == before
    person.choose("approve")
    person.expect_text(f"Saved the approved note as {filename}", timeout=90)
    person.wait_idle(timeout=90)
    return filename, before


def rejected_notes_are_never_stored(person: Person, notes: Notes) -> None:
    """A rejected note, and a revised one rejected after all, store nothing."""
    reject_a_note(person, notes)
    person.new_chat()
    revise_then_reject_a_note(person, notes)


def reject_a_note(person: Person, notes: Notes) -> None:
    before = notes()
    note_review(person, "the staging bucket is temporary.")
    person.shot("note review")
    person.choose("reject")
    person.expect_text("Rejected: the note was not saved, and nothing was stored.")
    person.wait_idle()
    person.shot("note rejected")
    assert notes() == before


def revise_then_reject_a_note(person: Person, notes: Notes) -> None:
    """Revision feedback redrafts the note under the same file name; nothing is stored."""
    before = notes()
    filename = note_review(person, "deploys happen on Tuesdays.")
    person.revise("Add that Fridays are frozen")
    person.expect_text("Revision: Add that Fridays are frozen", timeout=60)
    person.expect_text("Review requested", count=2)
    person.review_shown()
    person.shot("second review with the feedback")
    assert person.transcript().count(filename) >= 2  # the revised draft keeps its identity
    person.choose("reject")
    person.expect_text("Rejected: the note was not saved")
    person.wait_idle()
    person.shot("revised note rejected")
    assert notes() == before


LAUNCH_REVIEW = (
    "Launch review\nThe launch moves to Friday behind the ORCHID_FLAG switch.",
    "Support is staffed all weekend.",
)
"""The pages of the PDF the file journeys attach (``tests.support.documents.pdf_bytes``)."""


def a_pdf_is_answered_from_its_text(person: Person, graph: str, report: Path) -> None:
    person.new_chat()
    person.open(graph)
    person.attach(report)
    person.send("What are the key points of the attached file?")
    person.expect_text(f"I read the attached file {report.name}", timeout=60)
    person.expect_text("ORCHID_FLAG")
    person.wait_idle()
    person.shot("answered from the PDF's text")


def a_pdfs_key_points_are_saved_then_found(person: Person, graph: str, report: Path) -> None:
    """The note drafted from the attachment goes through review, then a new chat finds it by
    a word only the PDF holds, quoting the note's own text."""
    person.new_chat()
    person.open(graph)
    person.attach(report)
    person.send("Save the key points of this file as a note.")
    person.review_shown(timeout=60)
    person.expect_text(f"Key points of {report.name}")
    person.shot("a note of the PDF's key points under review")
    person.choose("approve")
    person.expect_text("Saved the approved note as note-key-points-of-launch-review", 90)
    person.wait_idle(timeout=90)
    person.shot("the note saved after approval")

    person.new_chat()
    person.open(graph)
    person.send("Search my notes: when does the ORCHID_FLAG launch happen?")
    person.expect_text("[K1] note-key-points-of-launch-review", timeout=60)
    person.expect_text("behind the ORCHID_FLAG switch")  # the note's own text, quoted
    person.wait_idle()
    person.shot("the saved note found")
