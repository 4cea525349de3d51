"""What the browser journeys share (the Chainlit and Open WebUI modules): one Chromium per
module, the module's screenshot folder (its ``SCREENSHOTS``), one login through the form per
module and, per journey, a fresh signed-in ``person`` of the module's ``PERSON`` kind at the
module's ``ui_url``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser

from tests.support.browser import Person, browser_user, chromium, journey_name, screenshot_dir


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with chromium() as browser:
        yield browser


@pytest.fixture(scope="module")
def shots(request: pytest.FixtureRequest) -> Path:
    folder = screenshot_dir(request.module.SCREENSHOTS)
    print(f"screenshots: {folder}")
    return folder


@pytest.fixture(scope="module")
def signed_in(
    browser: Browser,
    ui_url: str,
    shots: Path,
    tmp_path_factory: pytest.TempPathFactory,
    request: pytest.FixtureRequest,
) -> Path:
    """Log in once through the form; every journey starts from that session."""
    state = tmp_path_factory.mktemp("login") / "state.json"
    with browser_user(browser, request.module.PERSON, ui_url, shots, "login") as user:
        user.login()
        user.shot("logged in")
        user.page.context.storage_state(path=str(state))
    return state


@pytest.fixture
def person(
    browser: Browser, ui_url: str, shots: Path, signed_in: Path, request: pytest.FixtureRequest
) -> Iterator[Person]:
    kind: type[Person] = request.module.PERSON
    with browser_user(browser, kind, ui_url, shots, journey_name(request), signed_in) as user:
        user.page.goto(user.base_url)
        user.settle()
        yield user
