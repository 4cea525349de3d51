"""What the browser journeys share (the Chainlit and Open WebUI modules): a private native stack
per module (the module's ``STACK_ENV`` on top; its start-up output says each of ``STARTUP``), one
Chromium, the module's screenshot folder (its ``SCREENSHOTS``), its UI (its ``PERSON`` kind at the
stack's ``UI_PORT``), one login through the form per module and, per journey, a fresh signed-in
``person``. A module with a ``stack`` fixture of its own (the stack's own tests) keeps it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser

from tests.support.browser import BrowserUI, Person, chromium, journey_name, screenshot_dir
from tests.support.devstack import detached_stack, pg_data_dir


@pytest.fixture(scope="module")
def stack(
    tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Iterator[dict[str, str]]:
    folder = tmp_path_factory.mktemp(f"{request.module.SCREENSHOTS}-stack")
    with (
        pg_data_dir() as pg_data,
        detached_stack(folder, pg_data, request.module.STACK_ENV) as (env, out),
    ):
        for said in request.module.STARTUP:
            assert said in out, out
        yield env


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with chromium() as browser:
        yield browser


@pytest.fixture(scope="module")
def ui(browser: Browser, stack: dict[str, str], request: pytest.FixtureRequest) -> BrowserUI:
    folder = screenshot_dir(request.module.SCREENSHOTS)
    print(f"screenshots: {folder}")
    url = f"http://127.0.0.1:{stack[request.module.UI_PORT]}"
    return BrowserUI(browser, request.module.PERSON, url, folder)


@pytest.fixture(scope="module")
def signed_in(ui: BrowserUI, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Log in once through the form; every journey starts from that session."""
    state = tmp_path_factory.mktemp("login") / "state.json"
    with ui.user("login") as user:
        user.login()
        user.shot("logged in")
        user.page.context.storage_state(path=str(state))
    return state


@pytest.fixture
def person(ui: BrowserUI, signed_in: Path, request: pytest.FixtureRequest) -> Iterator[Person]:
    with ui.user(journey_name(request), signed_in) as user:
        user.page.goto(user.base_url)
        user.settle()
        yield user
