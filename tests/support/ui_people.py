"""Each UI's person: how Chainlit's and Open WebUI's pages are used (login, open a graph, send,
wait, answer a review), on top of :class:`tests.support.browser.Person`."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from playwright.sync_api import Browser, WebSocket
from playwright.sync_api import Error as PlaywrightError

from tests.support.browser import Person, browser_user

P = TypeVar("P", bound=Person)

CHAINLIT_USER, CHAINLIT_PASSWORD = "admin", "lgos-local-dev"
"""The native stack's local Chainlit login."""
WEBUI_EMAIL, WEBUI_PASSWORD = "admin@lgos.local", "lgos-local-dev"
"""The native stack's local Open WebUI admin."""
SOCKET_SETTLE_MS = 1500
"""Chainlit's socket connects a moment after #chat-input shows."""
ATTACHED = """name => [...document.querySelectorAll('body *')].some(
    e => e.childElementCount === 0 && e.textContent.trim() === name && e.offsetParent !== null
        && !e.closest('[data-sonner-toast]'))"""
"""A visible element showing exactly the file's name, outside a toast: its chip in the composer."""
THUMBNAIL = "n => document.images.length > n"
"""More images than ``n``: Chainlit previews an attached image as a thumbnail, not by its name."""
UPLOAD_ATTEMPTS, UPLOAD_SETTLE_MS = 3, 1000
"""How often a person tries an upload Chainlit refused, and how long a failed one keeps its chip."""
COLLAPSE_MS = 500
"""A Chainlit step opens or closes with an animation; closed, its content is removed."""
CLICK_TIMEOUT, CLICK_ATTEMPT_MS = 30.0, 3000
"""How long a person keeps trying to click a button, and how long one try waits."""
WORKING, WORKED = "Working…", "How I got there"
"""The labels of a graph's commentary while its Response runs and once it ended."""


class ChainlitUser(Person):
    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.stream_tokens = 0
        self.page.on("websocket", self._watch)

    def _watch(self, socket: WebSocket) -> None:
        def frame(payload: str | bytes) -> None:
            if isinstance(payload, str) and '"stream_token"' in payload:
                self.stream_tokens += 1

        socket.on("framereceived", frame)

    def settle(self) -> None:
        self.expect_visible("#chat-input")
        self.page.wait_for_timeout(SOCKET_SETTLE_MS)

    def login(self, user: str = CHAINLIT_USER, password: str = CHAINLIT_PASSWORD) -> None:
        self.page.goto(self.base_url)
        self.expect_visible("#email")
        self.page.fill("#email", user)
        self.page.fill("#password", password)
        self.shot("login form")
        self.page.click("button[type=submit]")
        self.settle()

    def open(self, graph: str) -> None:
        self.page.click("#chat-profiles")
        self.page.click(f'[data-test="select-item:{graph}"]')
        confirm = self.page.locator("#confirm")
        if confirm.is_visible():
            confirm.click()
        self.page.wait_for_function(
            "g => document.querySelector('#chat-profiles')?.innerText.includes(g)", arg=graph
        )
        self.settle()

    def send(self, text: str) -> None:
        self.page.fill("#chat-input", text)
        self.page.keyboard.press("Enter")

    def attach(self, path: Path, *, image: bool = False) -> None:
        """Attach, and attach again when the upload failed, as a person would: in a chat just
        opened, Chainlit can refuse the upload ("... failed" in a toast, no file in the
        composer) while its new session is still connecting. An ``image`` shows as a thumbnail."""
        for attempt in range(1, UPLOAD_ATTEMPTS + 1):
            shown, arg = (
                (THUMBNAIL, self.page.locator("img").count()) if image else (ATTACHED, path.name)
            )
            self.page.set_input_files("#upload-button-input", str(path))
            try:
                self.page.wait_for_function(shown, arg=arg, timeout=15_000)
                self.page.wait_for_timeout(UPLOAD_SETTLE_MS)  # a failed upload drops its chip
                if self.page.evaluate(shown, arg):
                    self.shot("image attached" if image else "file attached")
                    return
            except Exception:
                pass
            self.shot(f"upload failed, attempt {attempt}")
            self.page.wait_for_timeout(SOCKET_SETTLE_MS)
        self.fail(f"{path.name} attached in the composer")

    def choose(self, choice: str) -> None:
        self.click_button(choice.capitalize())

    def revise(self, feedback: str) -> None:
        self.send(feedback)  # a typed message answers a pending review

    def wait_idle(self, timeout: float = 60.0) -> None:
        """The run is over when Chainlit's stop button is gone."""
        self.page.wait_for_timeout(300)
        try:
            self.page.wait_for_selector("#stop-button", state="detached", timeout=timeout * 1000)
        except Exception:
            self.fail("the run to finish (the stop button to go)")

    def choose_setting(self, setting: str, value: str) -> None:
        self.page.click("#chat-settings-open-modal")
        self.expect_visible("#chat-settings")
        self.page.click(f"#{setting}")
        self.page.get_by_role("option", name=value, exact=True).click()
        self.shot(f"{setting} set to {value}")
        self.page.click("#confirm")
        self.page.locator("#chat-settings").wait_for(state="detached")

    def answers(self) -> list[str]:
        return self.page.locator(
            '.step[data-step-type="assistant_message"] .message-content'
        ).all_inner_texts()

    def commentary_running(self) -> None:
        """While a run works, its commentary is open under the label "Working…" alone."""
        label = self.page.locator(f'[id="step-{WORKING}"]').last
        try:
            label.wait_for(state="visible", timeout=15_000)
        except Exception:
            self.fail(f"the running commentary labelled {WORKING!r}")
        shown = label.inner_text().strip()
        if shown != WORKING or label.get_attribute("data-state") != "open":
            self.fail(f"the running commentary open under {WORKING!r} alone (it reads {shown!r})")

    def commentary_above_answer(self, lines: Sequence[str]) -> None:
        """After a turn, the latest answer's commentary sits above it, collapsed, under the
        label "How I got there" (not Chainlit's "Used …"); opened, it lists ``lines``."""
        label = self.page.locator(f'[id="step-{WORKED}"]').last
        try:
            label.wait_for(state="visible", timeout=15_000)
        except Exception:
            self.fail(f"the commentary labelled {WORKED!r}")
        shown = label.inner_text().strip()
        if shown != WORKED:
            self.fail(f"the commentary's label {WORKED!r} alone (it reads {shown!r})")
        if label.get_attribute("data-state") != "closed":
            self.fail("the commentary collapsed once the turn ended")
        self.page.wait_for_timeout(COLLAPSE_MS)
        for line in lines:
            self.expect_no_text(line)
        answer = self.page.locator('.step[data-step-type="assistant_message"]').last
        step_box, answer_box = label.bounding_box(), answer.bounding_box()
        assert step_box is not None and answer_box is not None
        if step_box["y"] + step_box["height"] > answer_box["y"]:
            self.fail(f"the commentary above the answer (at {step_box}, answer at {answer_box})")
        before = label.evaluate(
            "(step, answer) => !!(step.compareDocumentPosition(answer) & "
            "Node.DOCUMENT_POSITION_FOLLOWING)",
            answer.element_handle(),
        )
        if not before:
            self.fail("the commentary before the answer in the page")
        self.shot("commentary collapsed above the answer")
        label.click()
        for line in lines:
            self.expect_text(line)
        self.page.wait_for_timeout(COLLAPSE_MS)
        self.shot("commentary opened")
        answer_text = self.answers()[-1]
        if any(line in answer_text for line in lines):
            self.fail(f"the commentary {list(lines)} apart from the answer {answer_text!r}")

    def click_button(self, label: str) -> None:
        """Click the last button called ``label``. A message's buttons are drawn again each time
        its content changes (a background run's progress does every poll): a click whose button
        went away first is tried again, as a person clicks again when nothing happened."""
        button = self.page.get_by_role("button", name=label, exact=True).last
        deadline = time.monotonic() + CLICK_TIMEOUT
        while True:
            try:
                button.wait_for(state="visible", timeout=CLICK_ATTEMPT_MS)
                button.click(timeout=CLICK_ATTEMPT_MS)
                return
            except PlaywrightError:
                if time.monotonic() >= deadline:
                    self.fail(f"a {label!r} button that stays to be clicked")


class WebUIUser(Person):
    def settle(self) -> None:
        self.expect_page("#chat-input")

    def expect_page(self, selector: str, timeout: float = 60.0) -> None:
        """``selector`` shown once the page has loaded. On a busy machine Open WebUI's page has
        rendered its own "500: Internal Error" (a start-up request of its front end failed) and
        stays so until reloaded; a person reloads once, and a second error page still fails."""
        wanted = self.page.locator(selector)
        error = self.page.get_by_text("500: Internal Error")
        try:
            wanted.or_(error).first.wait_for(state="visible", timeout=timeout * 1000)
        except Exception:
            self.fail(f"a visible {selector}")
        if error.is_visible():
            self.shot("error page, reloaded once")
            self.page.reload()
        self.expect_visible(selector, timeout=timeout)

    def attach(self, path: Path) -> None:
        self.page.locator("input[type=file]").first.set_input_files(str(path))
        self.expect_text(path.name)
        self.page.wait_for_timeout(1500)  # Open WebUI stores the upload before the send
        self.shot("file attached")

    def choose(self, choice: str) -> None:
        self.card_option(choice)

    def revise(self, feedback: str) -> None:
        self.card_other(feedback)

    def review_shown(self, timeout: float = 30.0) -> None:
        self.expect_text("Review requested", timeout)
        self.expect_visible("text=Go ahead as drafted.")  # Open WebUI's ask-user card

    def draft_shown(self) -> None:
        """The draft is Markdown rendered as such: its title is a heading, not literal '#'."""
        draft = self.page.locator("#messages-container").locator("h1, h2, h3, h4")
        headings = draft.all_inner_texts()
        if not any(h.strip() and h.strip() != "Review requested" for h in headings):
            self.fail(f"the draft's title rendered as a heading (headings: {headings})")

    def transcript(self) -> str:
        return self.messages()

    def watch_growth(self) -> None:
        """Record each size the transcript takes (a streamed answer grows in many steps)."""
        self.page.evaluate(
            """() => {
              window.__sizes = [];
              new MutationObserver(() => {
                const m = document.querySelector('#messages-container');
                const n = m ? m.innerText.length : 0;
                if (window.__sizes[window.__sizes.length - 1] !== n) window.__sizes.push(n);
              }).observe(document.body, {subtree: true, childList: true, characterData: true});
            }"""
        )

    def growth(self) -> list[int]:
        sizes: list[int] = self.page.evaluate("window.__sizes")
        return sizes

    def login(self, email: str = WEBUI_EMAIL, password: str = WEBUI_PASSWORD) -> None:
        """Sign in through the form."""
        self.page.goto(f"{self.base_url}/auth")
        self.expect_page("input[type=email]")
        self.page.fill("input[type=email]", email)
        self.page.fill("input[type=password]", password)
        self.shot("login form")
        self.page.keyboard.press("Enter")
        self.expect_visible("#chat-input", timeout=60)
        # The release-notes dialog shows once per user.
        notes = self.page.get_by_role("button", name="Okay, Let's Go!")
        try:
            notes.wait_for(state="visible", timeout=5_000)
            notes.click()
        except Exception:
            pass

    def open(self, graph: str) -> None:
        self.page.goto(f"{self.base_url}/?models=lgos.{graph}")
        self.expect_page("#chat-input")
        self.page.wait_for_function(
            "g => document.body.innerText.includes(g)", arg=graph, timeout=30_000
        )
        self.page.wait_for_timeout(1000)  # the socket connects a moment after the input shows

    def send(self, text: str) -> None:
        self.page.click("#chat-input")
        self.page.keyboard.type(text)
        self.page.keyboard.press("Enter")

    def wait_idle(self, timeout: float = 90.0) -> None:
        """A turn is over when Open WebUI's Stop button is gone.

        After a page reload Open WebUI has once kept its Stop button under a reply that had
        finished (text and action icons shown); a person reloads the page then. A turn still
        running server-side brings the button back after that reload, so this still fails.
        """
        stop = self.page.get_by_role("button", name="Stop", exact=True)
        self.page.wait_for_timeout(500)
        try:
            stop.wait_for(state="detached", timeout=timeout * 1000)
            return
        except Exception:
            self.shot("stop button still shown")
        self.page.reload()
        self.expect_visible("#chat-input")
        self.page.wait_for_timeout(1000)  # the socket connects a moment after the input shows
        try:
            stop.wait_for(state="detached", timeout=timeout * 1000)
        except Exception:
            self.fail("the turn to finish (the Stop button to go)")

    def messages(self) -> str:
        return self.page.inner_text("#messages-container")

    def card_other(self, text: str) -> None:
        """Type a revision in the ask-user card's own *Other* field and submit it."""
        field = self.page.get_by_placeholder("Type your answer")
        try:
            field.last.wait_for(state="visible", timeout=30_000)
        except Exception:
            self.fail("the review card's Other field for a revision")
        field.last.click()
        self.page.keyboard.type(text)
        self.shot("revision typed on the card")
        self.page.get_by_role("button", name="Submit answers").click()

    def status_history(self, lines: Sequence[str]) -> None:
        """Open the latest answer's status history; each line shows, in this order."""
        toggle = self.page.get_by_role("button", name="Toggle status history")
        if toggle.count():
            toggle.last.click()
        for line in lines:
            self.expect_text(line)
        # The history lists every line under the latest one (shown first): read it from the end.
        shown = self.messages()
        positions = [shown.rindex(line) for line in lines]
        if positions != sorted(positions):
            self.fail(f"the status lines in the order {list(lines)}")

    def chat_id(self) -> str:
        self.page.wait_for_url(re.compile(r"/c/"))
        return self.page.url.rsplit("/c/", 1)[1].split("?")[0]

    def card_option(self, label: str) -> None:
        """Choose an option on Open WebUI's ask-user card (a single question submits at once)."""
        option = self.page.get_by_role("button", name=re.compile(f"^{re.escape(label)}\\b"))
        try:
            option.last.wait_for(state="visible", timeout=30_000)
        except Exception:
            self.fail(f"the review card's {label!r} option")
        option.last.click()
        submit = self.page.get_by_role("button", name="Submit answers")
        if submit.count() and submit.is_enabled():
            submit.click()


@contextmanager
def signed_in(
    browser: Browser, stack: dict[str, str], kind: type[P], shots: Path, journey: str
) -> Iterator[P]:
    """A person of ``kind`` signed in through its UI's form, in a fresh browser context, on a
    stack running both UIs."""
    port = stack["CHAINLIT_PORT" if kind is ChainlitUser else "OPEN_WEBUI_PORT"]
    with browser_user(browser, kind, f"http://127.0.0.1:{port}", shots, journey) as person:
        person.login()
        yield person
