"""Playwright driving Debian's Chromium (no browser download), as a person would use a page.

Every step saves a numbered screenshot; a failed expectation saves one more and fails with the
page's visible text, so a red test says what a person would have seen.
"""

from __future__ import annotations

import re
import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

import pytest
from playwright.sync_api import Browser, Page, sync_playwright

from tests.support.servers import ROOT

CHROMIUM = Path("/usr/bin/chromium")
SCREENSHOTS = ROOT / ".dev" / "screenshots"


@contextmanager
def chromium() -> Iterator[Browser]:
    if not CHROMIUM.exists():
        pytest.fail(
            "Debian's chromium is missing: `make test` installs it (apt-get install chromium)"
        )
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=["--no-sandbox", "--disable-dev-shm-usage"]
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

    def expect_visible(self, selector: str, timeout: float = 30.0) -> None:
        try:
            self.page.wait_for_selector(selector, state="visible", timeout=timeout * 1000)
        except Exception:
            self.fail(f"a visible {selector}")


P = TypeVar("P", bound=Person)


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
