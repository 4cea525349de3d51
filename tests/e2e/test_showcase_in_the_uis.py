"""The demo a person meets: both UIs open on ``advanced-graph`` and offer its example prompts.

A private native stack with both UIs (the real LiteLLM gateway, LGOS on offline-model's
readable answers, the Files service, SearXNG, the MCP demo database); Debian's Chromium through
Playwright. In Chainlit and in Open WebUI a new chat opens on ``advanced-graph``, every example
the gateway's catalog publishes is shown (Chainlit starters, Open WebUI suggestion prompts; no
generic Open WebUI suggestions), and each one, clicked, walks the path it promises: plain chat, a
file question (answered from an attached file), Web research with a cited link, a note saved
after review, the saved note found again with its ``[K#]`` label, an MCP database answer.

Screenshots: .dev/screenshots/showcase/.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Browser, Locator

from tests.support.browser import Person, screenshot_dir, searxng_urls
from tests.support.devstack import GATEWAY_KEY, both_uis_stack
from tests.support.ui_people import ChainlitUser, WebUIUser, signed_in

pytestmark = pytest.mark.socket
SCREENSHOTS = "showcase"
GRAPH = "advanced-graph"
PLAN = "Key point: the launch moves to Friday behind the SHOWCASE_FLAG switch."


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    # Both UIs; no OFFLINE_MODEL_ECHO: the readable answers a person meets.
    with both_uis_stack(tmp_path_factory.mktemp("showcase-stack"), {}) as env:
        yield env


@pytest.fixture(scope="module")
def shots() -> Path:
    return screenshot_dir(SCREENSHOTS)


@pytest.fixture(scope="module")
def examples(stack: dict[str, str]) -> dict[str, str]:
    """advanced-graph's examples as the gateway's catalog publishes them: label → prompt."""
    with httpx.Client(
        base_url=f"http://127.0.0.1:{stack['OPENAI_GATEWAY_PORT']}",
        headers={"Authorization": f"Bearer {GATEWAY_KEY}"},
        timeout=15.0,
    ) as client:
        info = client.get("/model/info").raise_for_status().json()["data"]
    entry = next(item for item in info if item["model_name"] == f"lgos/{GRAPH}")
    found = {e["label"]: e["prompt"] for e in entry["model_info"]["lgos"]["examples"]}
    assert len(found) == 6, found
    return found


# -- how each UI offers an example ----------------------------------------------------------------


def starter_id(label: str) -> str:
    """Chainlit's id for a starter button: its label, lower case, spaces as dashes."""
    return "#starter-" + label.strip().lower().replace(" ", "-")


def opens_on_the_showcase(person: Person) -> None:
    if isinstance(person, ChainlitUser):
        person.page.wait_for_function(
            "g => document.querySelector('#chat-profiles')?.innerText.includes(g)", arg=GRAPH
        )
    else:
        person.page.wait_for_function(
            "g => document.body.innerText.includes(g)", arg=GRAPH, timeout=30_000
        )


def suggestion(person: Person, label: str) -> Locator:
    """Open WebUI's suggestion button whose title is ``label`` (not e.g. the sidebar's Chats)."""
    return person.page.locator("button", has=person.page.get_by_text(label, exact=True))


def offered(person: Person, label: str) -> None:
    """The example is on the empty chat's page."""
    if isinstance(person, ChainlitUser):
        person.expect_visible(starter_id(label))
    else:
        try:
            suggestion(person, label).first.wait_for(state="attached", timeout=30_000)
        except Exception:
            person.fail(f"the suggestion prompt {label!r}")


def click_example(person: Person, label: str, prompt: str) -> None:
    """A new chat (on the default graph), then the example clicked as a person would."""
    person.new_chat()
    opens_on_the_showcase(person)
    offered(person, label)
    if isinstance(person, ChainlitUser):
        person.page.click(starter_id(label))
    else:
        suggestion(person, label).first.click()
        person.page.wait_for_timeout(800)
        # Some Open WebUI versions put the prompt in the input instead of sending it.
        if prompt[:20] not in person.page.inner_text("#messages-container", timeout=2_000):
            person.page.keyboard.press("Enter")
    person.expect_text(prompt[:40])


# -- the journey, the same in both UIs -------------------------------------------------------------


def walk_every_example(
    person: Person, examples: dict[str, str], stack: dict[str, str], folder: Path
) -> None:
    person.new_chat()
    opens_on_the_showcase(person)
    for label in examples:
        offered(person, label)
    if isinstance(person, WebUIUser):
        person.expect_no_text("Help me study")  # none of Open WebUI's generic suggestions
    person.shot("a new chat opens on advanced-graph with its examples")

    click_example(person, "Chat", examples["Chat"])
    person.expect_text("plain chat: no tools and no sources were used")
    person.wait_idle()
    person.expect_no_text("untrusted evidence")  # the graph's instructions are never echoed
    person.shot("chat example answered")

    click_example(person, "Ask about a file", examples["Ask about a file"])
    person.expect_text("No file came with this message: attach one and ask again.")
    person.wait_idle()
    person.shot("file example without a file asks for one")
    plan = folder / "launch-plan.txt"
    plan.write_text(PLAN)
    person.new_chat()
    opens_on_the_showcase(person)
    person.attach(plan)
    person.send(examples["Ask about a file"])
    person.expect_text("I read the attached file launch-plan.txt", timeout=60)
    person.expect_text("SHOWCASE_FLAG")
    person.wait_idle()
    person.shot("file example answered from the attachment")

    click_example(person, "Research the web", examples["Research the web"])
    person.expect_text("From the evidence I was given", timeout=60)
    person.wait_idle()
    urls = searxng_urls(stack, examples["Research the web"])
    urls |= searxng_urls(stack, "LangGraph interrupts")
    hrefs = person.page.locator("a[href^='http']").evaluate_all("a => a.map(x => x.href)")
    cited = [href for href in hrefs if href in urls]
    if not cited:
        person.fail(f"a link to one of SearXNG's results {sorted(urls)}")
    person.shot("research example with a cited link")

    click_example(person, "Save a note", examples["Save a note"])
    person.review_shown(timeout=60)
    person.expect_text("the staging password rotates every 30 days")  # the request
    person.expect_text("The staging password rotates every 30 days.")  # the draft's sentence
    person.shot("save example asks for a review")
    person.choose("approve")
    person.expect_text("Saved the approved note as note-", timeout=90)
    person.wait_idle(timeout=90)
    person.shot("note approved and saved")

    click_example(person, "Find a saved note", examples["Find a saved note"])
    person.expect_text("[K1] note-", timeout=60)
    person.wait_idle()
    if not re.search(r"\[K\d\] note-[\w-]+\.md \(file id file-\w+\)", person.transcript()):
        person.fail("the saved note quoted with its [K#] label, file name and file id")
    person.shot("find example quotes the saved note by its label")

    click_example(person, "Query the demo database", examples["Query the demo database"])
    person.expect_text("legacy-portal", timeout=60)
    person.wait_idle()
    person.shot("database example answered over MCP")


@pytest.mark.parametrize("kind", [ChainlitUser, WebUIUser], ids=["chainlit", "open-webui"])
def test_the_ui_opens_on_the_showcase_and_every_example_walks_its_path(
    browser: Browser,
    stack: dict[str, str],
    shots: Path,
    examples: dict[str, str],
    tmp_path: Path,
    kind: type[Person],
) -> None:
    journey = "chainlit" if kind is ChainlitUser else "open-webui"
    with signed_in(browser, stack, kind, shots, journey) as person:
        walk_every_example(person, examples, stack, tmp_path)
