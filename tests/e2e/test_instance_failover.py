"""One of the stack's two LGOS instances dies while a person chats in Chainlit: the next message is
answered, and a review paused on the dead instance is answered on the survivor — all through the
real LiteLLM gateway, in Debian's Chromium. Screenshots: .dev/screenshots/failover/.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import httpx
import pytest

from tests.support.devstack import DEVSTACK
from tests.support.ui_people import CHAINLIT_PASSWORD, CHAINLIT_USER, ChainlitUser

pytestmark = pytest.mark.socket
SCREENSHOTS = "failover"
UI_PORT = "CHAINLIT_PORT"
STARTUP = ("Chainlit UI:",)
STACK_ENV: dict[str, str] = {}
PERSON = ChainlitUser
USER, PASSWORD = CHAINLIT_USER, CHAINLIT_PASSWORD


def kill(stack: dict[str, str], component: str, port_variable: str) -> None:
    """SIGKILL ``component``'s process group (no graceful anything), then wait until its port
    is closed."""
    pids = json.loads((Path(stack["DEVSTACK_STATE_DIR"]) / "pids.json").read_text())
    os.killpg(pids[component]["pid"], signal.SIGKILL)
    url = f"http://127.0.0.1:{stack[port_variable]}/health"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            httpx.get(url, timeout=1)
        except httpx.TransportError:
            return
        time.sleep(0.2)
    raise AssertionError(f"{component} still answers after SIGKILL")


def restart(stack: dict[str, str], component: str) -> None:
    done = subprocess.run(
        [*DEVSTACK, "restart", component], env=stack, capture_output=True, text=True, timeout=180
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_conversation_and_a_review_outlive_the_instance_they_ran_on(
    person: ChainlitUser, stack: dict[str, str]
) -> None:
    # Only the first instance is up while the review pauses: it pauses there for sure.
    kill(stack, "lgos-2", "LGOS_SECOND_PORT")
    person.open("interruptible-approval")
    person.send("Rename the project to Atlas")
    person.review_shown()
    person.expect_text("Approve this change? Proposed change: Rename the project to Atlas")
    person.shot("review paused on the first instance")
    restart(stack, "lgos-2")
    kill(stack, "lgos", "LGOS_PORT")  # the instance the review paused on
    person.click_button("Approve")
    person.expect_text("Decision: approved. Applied: Proposed change: Rename the project to Atlas")
    person.wait_idle()
    person.shot("approved on the surviving instance")

    person.open("simple-graph")
    person.send("Hello after the failover")
    person.expect_text('You asked: "Hello after the failover"')
    person.wait_idle()
    restart(stack, "lgos")
    for turn in range(3):  # a conversation whose instance dies between two messages
        if turn == 1:
            kill(stack, "lgos", "LGOS_PORT")
        person.send(f"Message {turn}")
        person.expect_text(f'You asked: "Message {turn}"')
        person.wait_idle()
    person.shot("the conversation went on")
