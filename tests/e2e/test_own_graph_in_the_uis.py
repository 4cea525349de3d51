"""A person's own graph in the stack, as the first-graph tutorial has it: ``make new`` generates a
project (``lgos new``), a private native stack serves it beside the demo graphs with the one
setting ``LGOS_PROJECT`` and reload on. Through the real LiteLLM gateway the graph is listed with
its ``lgos`` extension; Chainlit and Open WebUI (Debian's Chromium, Playwright) list it with its
description and stream a chat with it. Then the project changes (a new description, a second
graph): LGOS and its worker reload by themselves, one catalog sync (what `make gateway-sync`
runs) publishes it, and both UIs show both without a restart of their own.

One stack with both UIs for the module. Screenshots: .dev/screenshots/own-graph/.
"""

from __future__ import annotations

import json
import re
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from lgos_stack.keys import LGOS_DEV_KEY
from lgos_stack.paths import ROOT
from playwright.sync_api import Browser

from tests.support.browser import screenshot_dir
from tests.support.devstack import DEVSTACK, GATEWAY_KEY, both_uis_stack
from tests.support.servers import OFFLINE_MODEL_ECHO
from tests.support.ui_people import ChainlitUser, WebUIUser, signed_in

pytestmark = pytest.mark.socket
SCREENSHOTS = "own-graph"
MODEL = "lgos/my-graph"
DESCRIPTION = "Reports progress, streams a cited answer, and can ask for approval first."
CHANGED = "My own graph, now changed"

SECOND_GRAPH = """

def create_registry(model: BaseChatModel | None = None) -> GraphRegistry:
    \"\"\"Two graphs now: the first under a second name too.\"\"\"
    return GraphRegistry.of(
        {"my-graph": graph.config(model), "my-second-graph": graph.config(model)}
    )
"""


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``make new NAME=my-graph``, into a folder of the test's (the tutorial's second command)."""
    folder = tmp_path_factory.mktemp("projects") / "my-graph"
    made = subprocess.run(
        ["make", "--no-print-directory", "new", "NAME=my-graph", f"DIR={folder}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert made.returncode == 0, made.stdout + made.stderr
    assert f"make dev LGOS_PROJECT={folder}" in made.stdout
    return folder


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory, project: Path) -> Iterator[dict[str, str]]:
    extra = {
        "LGOS_PROJECT": str(project),  # the tutorial's third command, on private ports
        "LGOS_RELOAD": "1",
        "OFFLINE_MODEL_TOKEN_DELAY": "0.05",  # paced tokens: the answer visibly grows
        **OFFLINE_MODEL_ECHO,  # the journeys check what reached the model
    }
    with both_uis_stack(tmp_path_factory.mktemp("own-graph-stack"), extra) as env:
        yield env


@pytest.fixture(scope="module")
def shots() -> Path:
    return screenshot_dir(SCREENSHOTS)


def gateway(stack: dict[str, str]) -> httpx.Client:
    return httpx.Client(
        base_url=f"http://127.0.0.1:{stack['OPENAI_GATEWAY_PORT']}",
        headers={"Authorization": f"Bearer {GATEWAY_KEY}"},
        timeout=15.0,
    )


def published_description(stack: dict[str, str], model: str = MODEL) -> str:
    with gateway(stack) as client:
        info = client.get("/model/info").raise_for_status().json()["data"]
    entry = next(item for item in info if item["model_name"] == model)
    lgos: dict[str, Any] = entry["model_info"]["lgos"]
    assert "features" in lgos  # the whole extension, not only a description
    description: str = lgos["description"]
    return description


def stack_pids(stack: dict[str, str]) -> dict[str, int]:
    state = Path(stack["DEVSTACK_STATE_DIR"]) / "pids.json"
    recorded = json.loads(state.read_text())
    return {name: recorded[name]["pid"] for name in ("chainlit", "open-webui", "lgos", "lgos-2")}


def served_by_lgos(
    stack: dict[str, str], description: str, port: str = "LGOS_PORT", timeout: float = 90.0
) -> list[str]:
    """An LGOS instance's own /v1/models (not the gateway's) once ``description`` is served:
    the graphs. ``port`` names the instance's port variable."""
    deadline = time.monotonic() + timeout
    headers = {"Authorization": f"Bearer {LGOS_DEV_KEY}"}
    url = f"http://127.0.0.1:{stack[port]}/v1/models"
    while True:
        try:
            models = httpx.get(url, headers=headers, timeout=5).raise_for_status().json()["data"]
            if all(model["lgos"]["description"] == description for model in models[-1:]):
                return [model["id"] for model in models]
        except httpx.HTTPError:
            pass  # restarting
        if time.monotonic() > deadline:
            raise AssertionError(f"LGOS did not reload to serve {description!r}")
        time.sleep(0.5)


def devstack(stack: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        [*DEVSTACK, *args], env=stack, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


# -- the steps each UI takes -------------------------------------------------------------------


def chainlit_profile(
    person: ChainlitUser, description: str, graph: str = "my-graph", timeout: float = 30.0
) -> None:
    """The profile list (re-read on each page load) shows ``graph`` with ``description``."""
    deadline = time.monotonic() + timeout
    while True:
        person.page.goto(person.base_url)
        person.settle()
        person.page.click("#chat-profiles")
        item = person.page.locator(f'[data-test="select-item:{graph}"]')
        if item.count():
            item.hover()
            person.page.wait_for_timeout(500)
            if description in person.text():
                return
        if time.monotonic() > deadline:
            person.fail(f"the {graph} profile described {description!r}")
        person.page.keyboard.press("Escape")
        person.page.wait_for_timeout(1000)


def webui_model(
    person: WebUIUser, description: str, graph: str = "my-graph", timeout: float = 45.0
) -> None:
    """A new chat with ``lgos.<graph>`` shows the model's name and ``description``."""
    deadline = time.monotonic() + timeout
    while True:
        person.page.goto(f"{person.base_url}/?models=lgos.{graph}")
        person.settle()
        person.page.wait_for_timeout(1000)
        if graph in person.text() and description in person.text():
            return
        if time.monotonic() > deadline:
            person.fail(f"the model {graph} described {description!r}")


# -- the journeys --------------------------------------------------------------------------------


def test_the_gateway_lists_my_graph_with_its_extension(stack: dict[str, str]) -> None:
    with gateway(stack) as client:
        models = client.get("/v1/models").raise_for_status().json()["data"]
    ids = {model["id"] for model in models}
    assert MODEL in ids and "lgos/simple-graph" in ids  # beside the demo graphs
    assert published_description(stack) == DESCRIPTION


def test_chainlit_lists_my_graph_and_streams_a_chat(
    browser: Browser, stack: dict[str, str], shots: Path
) -> None:
    with signed_in(browser, stack, ChainlitUser, shots, "chainlit") as person:
        chainlit_profile(person, DESCRIPTION)
        person.shot("my-graph among the profiles")
        person.new_chat()  # a fresh page: the profile list closed
        person.open("my-graph")
        person.ask("Hello my graph", 'You said: "Hello my graph"')
        person.shot("streamed answer from my-graph")
        assert person.stream_tokens > 5, "the answer arrived whole, not token by token"


def test_open_webui_lists_my_graph_and_streams_a_chat(
    browser: Browser, stack: dict[str, str], shots: Path
) -> None:
    with signed_in(browser, stack, WebUIUser, shots, "open-webui") as person:
        person.page.get_by_role("button", name=re.compile("^Selected model")).first.click()
        person.expect_text("my-graph")
        person.expect_text("simple-graph")
        person.page.get_by_placeholder("Search a model").fill("graph")
        person.page.get_by_text("my-graph", exact=True).last.scroll_into_view_if_needed()
        person.shot("my-graph in the model list")
        person.page.keyboard.press("Escape")
        webui_model(person, DESCRIPTION)
        person.shot("my-graph with its description")
        person.watch_growth()
        person.ask("Hello my graph", 'You said: "Hello my graph"')
        person.shot("streamed answer from my-graph")
        assert len(person.growth()) > 5, "the answer arrived whole, not token by token"


def test_a_changed_and_a_new_graph_reach_both_uis_after_one_sync(
    browser: Browser, stack: dict[str, str], project: Path, shots: Path
) -> None:
    before = stack_pids(stack)
    code = project / "src" / "my_graph"
    graph = code / "graph.py"
    graph.write_text(graph.read_text().replace(json.dumps(DESCRIPTION), json.dumps(CHANGED)))
    registry = code / "registry.py"
    source = registry.read_text()
    registry.write_text(source[: source.index("\n\ndef create_registry")] + SECOND_GRAPH)
    started = time.monotonic()
    # No restart by hand: the reload setting restarts both LGOS instances (the gateway routes to
    # both) and the worker on the change.
    for port in ("LGOS_PORT", "LGOS_SECOND_PORT"):
        assert served_by_lgos(stack, CHANGED, port)[-2:] == ["my-graph", "my-second-graph"]
    print(f"reloaded in {time.monotonic() - started:.0f}s")
    said = devstack(stack, "sync")  # what `make gateway-sync` runs
    print(f"reload and one sync took {time.monotonic() - started:.0f}s")
    assert "open-webui" in said, said
    assert published_description(stack) == CHANGED
    assert published_description(stack, "lgos/my-second-graph") == CHANGED
    with signed_in(browser, stack, ChainlitUser, shots, "changed-chainlit") as person:
        chainlit_profile(person, CHANGED)
        person.shot("the changed description among the profiles")
        chainlit_profile(person, CHANGED, "my-second-graph")
        person.shot("the new graph among the profiles")
    with signed_in(browser, stack, WebUIUser, shots, "changed-open-webui") as webui:
        webui_model(webui, CHANGED)
        webui.shot("the changed description in a new chat")
        webui_model(webui, CHANGED, "my-second-graph")
        webui.shot("the new graph in a new chat")
    assert stack_pids(stack) == before  # neither UI restarted, nor LGOS's supervisor by hand
