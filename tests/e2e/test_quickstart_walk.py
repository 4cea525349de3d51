"""The quickstart walked as a newcomer walks it, from the page alone: the command "Run it" gives
for the stack, run as written from the checkout in a fresh shell; what the page shows it printing;
then each step of "Chat in a browser" in Debian's Chromium (Playwright): the URL it gives, the
login it gives, the graph it says a new chat opens on, the message it says to type and the answer
it says streams in. None of those is written here: change the page and this walks the new page.

The page's ports (3000-3015) may belong to a developer's running stack: the command runs in a
network namespace of its own (``unshare --net``, root), where they are private, and Chromium joins
that namespace. The stack keeps its state in a folder of the test's, not the checkout's ``.dev/``.
Ctrl-C stops it, as the page says.

Screenshots: .dev/screenshots/quickstart/.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from lgos_stack.paths import ROOT
from playwright.sync_api import Browser

from tests.support.browser import Person, browser_user, chromium, screenshot_dir
from tests.support.devstack import PORT_VARIABLES, pg_data_dir
from tests.support.netns import Namespaced, private_network
from tests.support.ui_people import ChainlitUser, WebUIUser

pytestmark = pytest.mark.socket
PAGE = ROOT / "docs" / "tutorials" / "quickstart.md"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```\n", re.MULTILINE | re.DOTALL)
PEOPLE: dict[str, type[Person]] = {"Chainlit": ChainlitUser, "Open WebUI": WebUIUser}
"""Who uses the UI a step names."""
NOT_A_FRESH_SHELL = (
    *("LGOS_", "OPENAI_", "DEMO_", "DEVSTACK_", "OFFLINE_MODEL_", "FILES_"),
    *("MAKEFLAGS", "MAKELEVEL", "MFLAGS"),  # under `make test` the page's command is no sub-make
)
"""Settings the test session may carry and a newcomer's shell does not."""


# -- what the page says -------------------------------------------------------------------------


def section(heading: str) -> str:
    text = PAGE.read_text()
    assert f"\n## {heading}\n" in text, f"the quickstart has no {heading!r} section"
    return text.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]


def stack_command() -> str:
    """The command "Run it" gives for the stack: its comment says it runs the stack."""
    block = FENCE.search(section("Run it"))
    assert block, "no command block under Run it"
    for line in block.group(2).splitlines():
        command, _, comment = line.partition("#")
        if "runs the stack" in comment:
            return command.strip()
    raise AssertionError(f"no command under Run it says it runs the stack:\n{block.group(2)}")


def shown_output(command: str) -> list[str]:
    """The lines the page says ``command`` prints."""
    _, said = section("Run it").split(f"`{command}` prints:", 1)
    block = FENCE.search(said)
    assert block, f"no block after `{command}` prints:"
    return [line for line in block.group(2).splitlines() if line.strip()]


@dataclass(frozen=True)
class Step:
    """One numbered step of "Chat in a browser", read as a newcomer reads it."""

    ui: str
    url: str
    login: tuple[str, str]
    graph: str
    message: str
    answer: str
    """What the page says the answer starts with."""
    examples: bool
    """Whether the page says the new chat offers examples."""


def said(pattern: str, text: str) -> re.Match[str]:
    found = re.search(pattern, text)
    assert found, f"the step says nothing like {pattern!r}: {text}"
    return found


def chat_steps() -> dict[str, Step]:
    """The steps that open a UI, by the UI they open."""
    steps = {}
    for item in re.split(r"^\d+\. ", section("Chat in a browser"), flags=re.MULTILINE)[1:]:
        text = " ".join(item.split())
        url = re.search(r"<(http://[^>]+)>", text)
        if url is None:
            continue  # a step that opens no page
        ui = said(r"Open (?:the )?(Chainlit|Open WebUI)", text).group(1)
        login = said(r"log in as \*\*(.+?) / (.+?)\*\*", text)
        steps[ui] = Step(
            ui=ui,
            url=url.group(1),
            login=(login.group(1), login.group(2)),
            graph=said(r"opens on the [^`]*`([^`]+)`", text).group(1),
            message=said(r"Type `([^`]+)`", text).group(1),
            answer=said(r"starting with `([^`]+)`", text).group(1),
            examples="example" in said(r"opens on the [^.]*\.", text).group(0),
        )
    return steps


# -- the newcomer's machine -----------------------------------------------------------------------


def fresh_shell(state: Path, pg_data: str) -> dict[str, str]:
    """The test session's environment less the product's settings (a newcomer's shell has none),
    the stack's state in ``state``."""
    env = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(NOT_A_FRESH_SHELL) and name not in PORT_VARIABLES
    }
    return {**env, "DEVSTACK_STATE_DIR": str(state), "DEVSTACK_PGDATA": pg_data}


@dataclass(frozen=True)
class Started:
    """The page's command running in its namespace, its state kept in ``state``."""

    inside: Namespaced
    state: Path

    def printed(self) -> list[str]:
        """What it printed, its state folder named as by default (the page shows that)."""
        return [line.replace(f"{self.state}/", ".dev/") for line in self.inside.lines]


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Started]:
    command = stack_command()
    shown = shown_output(command)
    folder = tmp_path_factory.mktemp("quickstart")
    state = folder / "state"
    with pg_data_dir() as pg_data:
        env = fresh_shell(state, pg_data)
        with private_network(command, ROOT, env, folder / "make-dev.log") as inside:
            inside.wait_for(shown[-1], timeout=900)
            yield Started(inside, state)
            code = inside.ctrl_c()
            left = inside.left_running()
        assert not left, f"Ctrl-C left these running:\n{left}\n{inside.output}"
        print(f"`{command}` stopped by Ctrl-C (exit code {code}), nothing left running")


@pytest.fixture(scope="module")
def browser(stack: Started, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browser]:
    with chromium(stack.inside.chromium(tmp_path_factory.mktemp("chromium"))) as browser:
        yield browser


@pytest.fixture(scope="module")
def shots() -> Path:
    return screenshot_dir("quickstart")


# -- the walk ----------------------------------------------------------------------------------


def test_the_command_prints_what_the_page_shows(stack: Started) -> None:
    """Each line the page shows is printed (times vary; "..." shortens a value)."""
    printed = stack.printed()
    output = "\n".join(printed)
    for line in shown_output(stack_command()):
        healthy = re.fullmatch(r"(\S+ +healthy on \S+) in \d+\.\ds", line)
        if healthy:
            wanted = healthy.group(1)
            assert any(real.startswith(wanted) for real in printed), (wanted, output)
        elif line.startswith("stack healthy in"):
            assert any(real.startswith("stack healthy in") for real in printed), output
        else:
            head = line.split("...", 1)[0].rstrip(" ,;")
            assert any(real.startswith(head) for real in printed), (line, output)


def opened_on(person: Person, graph: str) -> None:
    """A new chat is on ``graph`` without picking it: Chainlit's profile, Open WebUI's model."""
    where = (
        "document.querySelector('#chat-profiles')?.innerText"
        if isinstance(person, ChainlitUser)
        else "document.querySelector('button[aria-label^=\"Selected model\"]')?.innerText"
    )
    try:
        person.page.wait_for_function(f"g => ({where} || '').includes(g)", arg=graph)
    except Exception:
        person.fail(f"a new chat open on {graph!r}")


def examples_offered(person: Person) -> None:
    """The new chat shows example prompts: Chainlit's starters, Open WebUI's suggestions."""
    if isinstance(person, ChainlitUser):
        person.expect_visible('[id^="starter-"]')
    else:
        person.expect_text("Suggested")


def log_in(person: Person, login: tuple[str, str]) -> None:
    if isinstance(person, ChainlitUser | WebUIUser):
        person.login(*login)
    else:
        raise AssertionError(f"no login for {type(person).__name__}")


def answer_of(person: Person) -> str:
    """The latest answer's text."""
    if isinstance(person, ChainlitUser):
        return person.answers()[-1]
    answers = person.page.locator("#messages-container .chat-assistant")
    return answers.last.inner_text()


@pytest.mark.parametrize("ui", list(PEOPLE))
def test_a_newcomer_chats_in_the_ui_as_the_page_says(
    browser: Browser, stack: Started, shots: Path, ui: str
) -> None:
    steps = chat_steps()
    assert ui in steps, f"no step of Chat in a browser opens {ui}"
    step = steps[ui]
    kind = PEOPLE[ui]
    journey = ui.lower().replace(" ", "-")
    with browser_user(browser, kind, step.url, shots, journey) as person:
        log_in(person, step.login)
        person.shot("logged in")
        opened_on(person, step.graph)
        if step.examples:
            examples_offered(person)
        person.shot(f"a new chat on {step.graph}")
        if isinstance(person, WebUIUser):
            person.watch_growth()
        person.ask(step.message, step.answer, timeout=90)
        person.shot("the answer")
        answer = answer_of(person).strip()
        assert answer.startswith(step.answer), answer
        if isinstance(person, ChainlitUser):
            assert person.stream_tokens > 1, "the answer arrived whole, not streamed"
        else:
            assert isinstance(person, WebUIUser)
            assert len(person.growth()) > 2, "the answer arrived whole, not streamed"
